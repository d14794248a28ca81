'use client';

import { Check, Pencil, Trash2, X } from 'lucide-react';
import { type FormEvent, type KeyboardEvent, useRef, useState } from 'react';

import { type Plant, plantName, type PlantRow, plantTag } from '@/shared/plants';
import { trpc } from '@/ui/trpc';

import { asSentence, problemOf } from '../problems';
import { UserText } from '../UserText';

/** A row's actions: quiet icon buttons with full names for assistive technology. */
export function RowActions({ plant, onEdit, onDelete }: { plant: PlantRow; onEdit: () => void; onDelete: () => void }) {
  const what = `${plant.name} (id ${plant.id.toString()})`;
  return (
    <div className="row-actions">
      <button type="button" className="button button--small button--quiet icon-button" aria-label={`Edit plant ${what}`} title="Rename or re-tag" onClick={onEdit}>
        <Pencil className="icon" aria-hidden="true" />
      </button>
      <button
        type="button"
        id={`delete-plant-${plant.id.toString()}`}
        className="button button--small button--danger-quiet icon-button"
        aria-label={`Delete plant ${what}`}
        title="Delete"
        onClick={onDelete}
      >
        <Trash2 className="icon" aria-hidden="true" />
      </button>
    </div>
  );
}

type Errors = { name?: string; tag?: string; form?: string };

/**
 * A row in place editing: name and tag become inputs, checked with the router's own rules; Enter saves,
 * Escape cancels. Only what changed is sent (a merge patch): an emptied tag is removed.
 */
export function EditRow({ plant, columns, onDone }: { plant: PlantRow; columns: string[]; onDone: (saved?: Plant) => void }) {
  const utils = trpc.useUtils();
  const [name, setName] = useState(plant.name);
  const [tag, setTag] = useState(plant.tag ?? '');
  const [errors, setErrors] = useState<Errors>({});
  const nameRef = useRef<HTMLInputElement>(null);
  const tagRef = useRef<HTMLInputElement>(null);
  const formId = `edit-plant-${plant.id.toString()}`;

  const update = trpc.plants.update.useMutation({
    onSuccess: async (saved) => {
      await utils.plants.page.invalidate();
      onDone(saved);
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
    if (Object.keys(patch).length === 0) return onDone();
    update.mutate({ id: plant.id, ...patch });
  }

  function onKeyDown(event: KeyboardEvent) {
    if (event.key === 'Escape') {
      event.preventDefault();
      onDone();
    }
  }

  return (
    <tr className="row--editing" data-plant-id={plant.id.toString()} onKeyDown={onKeyDown}>
      {columns.map((column) => {
        if (column === 'select') return <td key={column} className="cell-select" />;
        if (column === 'id')
          return (
            <td key={column} className="id" data-label="Id">
              {plant.id.toString()}
              <form id={formId} onSubmit={save} aria-label={`Edit plant ${plant.id.toString()}`} />
            </td>
          );
        if (column === 'name' || column === 'tag') {
          const isName = column === 'name';
          const error = isName ? errors.name : errors.tag;
          const inputId = `${formId}-${column}`;
          return (
            <td key={column} data-label={isName ? 'Name' : 'Tag'}>
              <div className="edit-cell">
                <label htmlFor={inputId} className="sr-only">
                  {isName ? 'Name' : 'Tag (empty for none)'}
                </label>
                <input
                  id={inputId}
                  form={formId}
                  ref={isName ? nameRef : tagRef}
                  value={isName ? name : tag}
                  autoFocus={isName}
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
            </td>
          );
        }
        if (column === 'actions')
          return (
            <td key={column} className="cell-actions">
              <div className="row-actions">
                <button type="submit" form={formId} className="button button--small button--primary icon-button" aria-label={`Save plant ${plant.id.toString()}`} title="Save">
                  {update.isPending ? <span className="spinner" aria-hidden="true" /> : <Check className="icon" aria-hidden="true" />}
                </button>
                <button type="button" className="button button--small button--quiet icon-button" aria-label="Cancel editing" title="Cancel" onClick={() => onDone()}>
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
        // Owner and created stay as they are.
        return (
          <td key={column} data-label={column === 'owner' ? 'Owner' : 'Created'}>
            {column === 'owner' ? <UserText clamp>{plant.owner ?? ''}</UserText> : (plant.createdAt?.toLocaleString() ?? '')}
          </td>
        );
      })}
    </tr>
  );
}
