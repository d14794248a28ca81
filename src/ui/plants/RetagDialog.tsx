'use client';

import { Tags } from 'lucide-react';
import { type FormEvent, useRef, useState } from 'react';

import { plantTag } from '@/shared/plants';
import { TAG_MAX_LENGTH } from '@/shared/limits';

import { Modal } from '../ConfirmDialog';
import { Field } from '../Field';
import { asSentence } from '../problems';
import { countText } from './counts';
import { TagSuggestions, tagSuggestionsId } from './TagSuggestions';

/** The new tag for every selected plant (empty removes the tag), checked with the router's own rule. */
export function RetagDialog({
  selected,
  selectedExact = true,
  mergeFrom,
  onRetag,
  onCancel,
}: {
  selected: number;
  /** False for a "select all" of a view whose count stopped at the cap: at least `selected` ("10,000+"). */
  selectedExact?: boolean;
  /** Every plant of a tag is selected: the re-tag merges that tag into the one chosen. */
  mergeFrom?: string;
  onRetag: (tag: string | null) => void;
  onCancel: () => void;
}) {
  const [tag, setTag] = useState('');
  const [error, setError] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const plants = selected === 1 && selectedExact ? '1 plant' : `${countText(selected, selectedExact)} plants`;
  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (tag === '') return onRetag(null);
    const result = plantTag.safeParse(tag);
    if (!result.success) {
      setError(asSentence(result.error.issues[0]!.message));
      inputRef.current?.focus();
      return;
    }
    onRetag(tag);
  }
  return (
    <Modal
      title={
        mergeFrom === undefined
          ? `Re-tag ${plants}`
          : `Merge the tag “${mergeFrom}” of ${plants} into another`
      }
      onCancel={onCancel}
      initialFocus={inputRef}
      describedBy={false}
    >
      <form className="form-grid" onSubmit={onSubmit} noValidate>
        <Field
          id="retag-tag"
          label="New tag"
          hint={`Up to ${TAG_MAX_LENGTH} characters. Leave empty to remove the tag from every selected plant.`}
          autoComplete="off"
          value={tag}
          onChange={(event) => {
            setTag(event.target.value);
            setError(null);
          }}
          error={error}
          inputRef={inputRef}
          list={tagSuggestionsId('retag-tag')}
        />
        <TagSuggestions inputId="retag-tag" text={tag} />
        <div className="dialog__actions">
          <button type="button" className="button" onClick={onCancel}>
            Cancel
          </button>
          <button type="submit" className="button button--primary">
            <Tags className="icon" aria-hidden="true" />
            {tag === '' ? 'Remove the tag' : 'Re-tag'}
          </button>
        </div>
      </form>
    </Modal>
  );
}
