'use client';

import { Check, X } from 'lucide-react';
import { type FormEvent, type KeyboardEvent, useEffect, useRef, useState } from 'react';

import { type Plant, plantName, type PlantRow, plantTag } from '@/shared/plants';
import { trpc } from '@/ui/trpc';

import { asSentence, problemOf } from '../problems';
import { UserText } from '../UserText';
import { When } from '../When';
import type { PlantColumn } from './columns';

type Errors = { name?: string; tag?: string; form?: string };

export type EditOutcome = { saved: Plant; before: PlantRow } | null;

/**
 * A row in place editing: name and tag become inputs, checked with the router's own rules; Enter saves,
 * Escape cancels, and either way the cursor goes back to the row. Only what changed is sent (a merge
 * patch): an emptied tag is removed. Whether the text differs from the plant is reported up, so an edit
 * with changes is never thrown away without the person saying so.
 */
export function EditRow({
  plant,
  columns,
  focusColumn,
  onDone,
  onDirtyChange,
  onSaving,
}: {
  plant: PlantRow;
  columns: readonly PlantColumn[];
  focusColumn: 'name' | 'tag';
  onDone: (outcome: EditOutcome) => void;
  onDirtyChange: (dirty: boolean) => void;
  /** Just before the change is sent: the live feed's echo of it is this tab's own. */
  onSaving: (id: bigint) => void;
}) {
  const utils = trpc.useUtils();
  const [name, setName] = useState(plant.name);
  const [tag, setTag] = useState(plant.tag ?? '');
  const [errors, setErrors] = useState<Errors>({});
  const nameRef = useRef<HTMLInputElement>(null);
  const tagRef = useRef<HTMLInputElement>(null);
  const formId = `edit-plant-${plant.id.toString()}`;
  const dirty = name !== plant.name || tag !== (plant.tag ?? '');
  useEffect(() => onDirtyChange(dirty), [dirty, onDirtyChange]);

  const update = trpc.plants.update.useMutation({
    onSuccess: async (saved) => {
      await utils.plants.page.invalidate();
      onDone({ saved, before: plant });
    },
    onError: (error) => {
      const problem = problemOf(error);
      if (problem.status === 401) return;
      if (problem.field === 'name' || problem.field === 'tag') {
        setErrors({ [problem.field]: asSentence(problem.message) });
        (problem.field === 'name' ? nameRef : tagRef).current?.focus();
      } else setErrors({ form: `Not saved: ${problem.message}.` });
    },
  });

  function save(event?: FormEvent) {
    event?.preventDefault();
    if (update.isPending) return;
    const patch: { name?: string; tag?: string | null } = {};
    if (name !== plant.name) patch.name = name;
    if (tag !== (plant.tag ?? '')) patch.tag = tag === '' ? null : tag;
    const next: Errors = {};
    if (patch.name !== undefined) {
      const result = plantName.safeParse(patch.name);
      if (!result.success) next.name = asSentence(result.error.issues[0]!.message);
    }
    if (typeof patch.tag === 'string') {
      const result = plantTag.safeParse(patch.tag);
      if (!result.success) next.tag = asSentence(result.error.issues[0]!.message);
    }
    setErrors(next);
    if (next.name) return nameRef.current?.focus();
    if (next.tag) return tagRef.current?.focus();
    if (Object.keys(patch).length === 0) return onDone(null);
    onSaving(plant.id);
    update.mutate({ id: plant.id, ...patch });
  }

  function onKeyDown(event: KeyboardEvent) {
    if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      onDone(null);
    }
  }

  const input = (column: 'name' | 'tag') => {
    const isName = column === 'name';
    const error = isName ? errors.name : errors.tag;
    const inputId = `${formId}-${column}`;
    return (
      <div className="edit-cell">
        <label htmlFor={inputId} className="sr-only">
          {isName ? 'Name' : 'Tag (empty for none)'}
        </label>
        <input
          id={inputId}
          form={formId}
          ref={isName ? nameRef : tagRef}
          value={isName ? name : tag}
          autoFocus={focusColumn === column}
          autoComplete="off"
          placeholder={isName ? undefined : 'No tag'}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${inputId}-error` : undefined}
          onChange={(event) => {
            if (isName) setName(event.target.value);
            else setTag(event.target.value);
            // A message about what was there goes once it is being changed.
            if (error) setErrors((current) => ({ ...current, [column]: undefined }));
          }}
        />
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
            // With the tag column folded away (a narrow window), its input sits under the name's.
            return (
              <td key={column}>
                {input('name')}
                {columns.includes('tag') ? null : input('tag')}
              </td>
            );
          case 'tag':
            return <td key={column}>{input('tag')}</td>;
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
                {errors.form ? (
                  <p className="field__error" role="alert">
                    {errors.form}
                  </p>
                ) : null}
              </td>
            );
          default:
            return null;
        }
      })}
    </tr>
  );
}
