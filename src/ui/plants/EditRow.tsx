'use client';

import { Check, X } from 'lucide-react';
import { type FormEvent, type KeyboardEvent, useEffect, useMemo, useRef, useState } from 'react';
import { z } from 'zod';

import { errorCatalog } from '@/shared/errors';
import { isOptionalPlantField, type Plant, PLANT_FIELD_NAMES, type PlantFieldName, plantFields, type PlantPatch } from '@/shared/plants';
import { type PlantRow } from '@/shared/plant-table';
import { trpc } from '@/ui/trpc';

import { asSentence, problemOf } from '../problems';
import { UserText } from '../UserText';
import { When } from '../When';
import type { PlantColumn } from './columns';
import { isPlantField, OTHER_PLANT_FIELDS, PLANT_FIELD_UI } from './fields';
import { TagSuggestions, tagSuggestionsId } from './TagSuggestions';
import { type LiveMark, MARK_LABEL } from './useLiveMarks';

type Errors = Partial<Record<PlantFieldName | 'form', string>>;
type Texts = Record<PlantFieldName, string>;

/** A plant's fields as the inputs hold them: an optional field the plant lacks is empty. */
const textsOf = (plant: PlantRow): Texts => Object.fromEntries(PLANT_FIELD_NAMES.map((field) => [field, plant[field] ?? ''])) as Texts;

/** A field's own rules (an optional field's, for a value given): the router's, so the words are the same. */
const rulesOf = (field: PlantFieldName) => {
  const declared = plantFields[field];
  return declared instanceof z.ZodOptional ? (declared.unwrap() as z.ZodType) : declared;
};

/** What a save did: the plant as stored, the row as it was when the edit opened, and the fields the save wrote (undo writes back those only). */
export type EditOutcome = { saved: Plant; before: PlantRow; changed: PlantFieldName[] } | null;

/**
 * A row in place editing: the plant's declared fields (shared/plants.ts) become inputs, checked with the router's own rules; Enter saves,
 * Escape cancels, and either way the cursor goes back to the row. Only what changed is sent (a merge
 * patch): an emptied optional field (the tag) is removed. Whether the text differs from the plant is reported up, so an edit
 * with changes is never thrown away without the person saying so. "Changed" is measured from the row as it was
 * when the edit opened: a change made elsewhere meanwhile (the live feed's mark) is shown beside the fields, and a
 * save writes only what this person changed, so it never writes back a field somebody else just changed.
 */
export function EditRow({
  plant,
  mark,
  columns,
  focusColumn,
  onDone,
  onDirtyChange,
  onSaving,
}: {
  plant: PlantRow;
  /** What the live feed said of this plant meanwhile, if anything. */
  mark: LiveMark['kind'] | null;
  columns: readonly PlantColumn[];
  focusColumn: PlantFieldName;
  onDone: (outcome: EditOutcome) => void;
  onDirtyChange: (dirty: boolean) => void;
  /** Just before the change is sent: the live feed's echo of it is this tab's own. */
  onSaving: (id: bigint) => void;
}) {
  const utils = trpc.useUtils();
  const [opened] = useState(plant);
  const before = useMemo(() => textsOf(opened), [opened]);
  const [texts, setTexts] = useState<Texts>(before);
  const [errors, setErrors] = useState<Errors>({});
  const inputs = useRef<Partial<Record<PlantFieldName, HTMLInputElement | null>>>({});
  const formId = `edit-plant-${plant.id.toString()}`;
  const dirty = PLANT_FIELD_NAMES.some((field) => texts[field] !== before[field]);
  useEffect(() => onDirtyChange(dirty), [dirty, onDirtyChange]);

  const update = trpc.plants.update.useMutation({
    onSuccess: async (saved, patch) => {
      await utils.plants.page.invalidate();
      onDone({ saved, before: opened, changed: PLANT_FIELD_NAMES.filter((field) => field in patch) });
    },
    onError: (error) => {
      const problem = problemOf(error);
      if (problem.status === 401) return;
      const field = problem.field;
      if (field !== null && isPlantField(field)) {
        setErrors({ [field]: asSentence(problem.message) });
        inputs.current[field]?.focus();
      } else if (problem.value === errorCatalog.plantNotFound.value) {
        setErrors({ form: `Not saved: plant ${plant.id.toString()} was deleted elsewhere. Cancel (Escape) to close the row.` });
      } else setErrors({ form: `Not saved: ${problem.message}.` });
    },
  });

  function save(event?: FormEvent) {
    event?.preventDefault();
    if (update.isPending) return;
    const patch: Record<string, string | null> = {};
    const next: Errors = {};
    for (const field of PLANT_FIELD_NAMES.filter((each) => texts[each] !== before[each])) {
      const text = texts[field];
      patch[field] = text === '' && isOptionalPlantField(field) ? null : text;
      if (patch[field] === null) continue;
      const result = rulesOf(field).safeParse(text);
      if (!result.success) next[field] = asSentence(result.error.issues[0]!.message);
    }
    setErrors(next);
    const invalid = PLANT_FIELD_NAMES.find((field) => next[field]);
    if (invalid) return inputs.current[invalid]?.focus();
    if (Object.keys(patch).length === 0) return onDone(null);
    onSaving(plant.id);
    update.mutate({ id: plant.id, ...(patch as PlantPatch) });
  }

  function onKeyDown(event: KeyboardEvent) {
    if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      onDone(null);
    }
  }

  const input = (column: PlantFieldName) => {
    const error = errors[column];
    const inputId = `${formId}-${column}`;
    return (
      <div className="edit-cell" key={column}>
        <label htmlFor={inputId} className="sr-only">
          {PLANT_FIELD_UI[column].editLabel}
        </label>
        <input
          id={inputId}
          form={formId}
          ref={(element) => {
            inputs.current[column] = element;
          }}
          value={texts[column]}
          autoFocus={focusColumn === column}
          autoComplete="off"
          placeholder={PLANT_FIELD_UI[column].placeholder}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${inputId}-error` : undefined}
          list={column === 'tag' ? tagSuggestionsId(inputId) : undefined}
          onChange={(event) => {
            const text = event.target.value;
            setTexts((current) => ({ ...current, [column]: text }));
            // A message about what was there goes once it is being changed.
            if (error) setErrors((current) => ({ ...current, [column]: undefined }));
          }}
        />
        {column === 'tag' ? <TagSuggestions inputId={inputId} text={texts[column]} /> : null}
        {error ? (
          <p className="field__error" id={`${inputId}-error`}>
            {error}
          </p>
        ) : null}
      </div>
    );
  };

  return (
    <tr className="row--editing" data-plant-id={plant.id.toString()} data-grid-row={plant.id.toString()} onKeyDown={onKeyDown}>
      {columns.map((column) => {
        switch (column) {
          case 'select':
            return (
              <td key={column} className="cell-select">
                <form id={formId} onSubmit={save} aria-label={`Edit plant ${plant.id.toString()}`} />
              </td>
            );
          case 'id':
            return (
              <td key={column} className="id">
                {plant.id.toString()}
              </td>
            );
          case 'name':
            // With another field's column folded away (a narrow window), its input sits under the name's. What
            // concerns the whole row (a mark, a refusal) is said here too: the widest cell, never the actions'.
            return (
              <td key={column}>
                {input('name')}
                {OTHER_PLANT_FIELDS.filter((field) => !columns.includes(field)).map(input)}
                {mark ? <span className={`live-mark live-mark--${mark}`}>{MARK_LABEL[mark]}</span> : null}
                {errors.form ? (
                  <p className="field__error" role="alert">
                    {errors.form}
                  </p>
                ) : null}
              </td>
            );
          case 'owner':
            return (
              <td key={column} className="owner">
                <UserText clamp>{plant.owner ?? ''}</UserText>
              </td>
            );
          case 'created':
            return (
              <td key={column} className="created">
                {plant.createdAt ? <When date={plant.createdAt} /> : null}
              </td>
            );
          case 'actions':
            return (
              <td key={column} className="cell-actions">
                <div className="row-actions">
                  <button type="submit" form={formId} className="button button--small button--primary icon-button" aria-label={`Save plant ${plant.id.toString()}`} title="Save (Enter)">
                    {update.isPending ? <span className="spinner" aria-hidden="true" /> : <Check className="icon" aria-hidden="true" />}
                  </button>
                  <button type="button" className="button button--small button--quiet icon-button" aria-label="Cancel editing" title="Cancel (Escape)" onClick={() => onDone(null)}>
                    <X className="icon" aria-hidden="true" />
                  </button>
                </div>
              </td>
            );
          default:
            return isPlantField(column) ? <td key={column}>{input(column)}</td> : null;
        }
      })}
    </tr>
  );
}
