'use client';

import { type FormEvent, type RefObject, useRef, useState } from 'react';

import { NAME_MAX_LENGTH, TAG_MAX_LENGTH } from '@/shared/plants';
import { trpc } from '@/ui/trpc';

import { Field } from './Field';
import { PLANT_FIELDS, type PlantField, type PlantFormErrors, type PlantFormValues, validatePlantForm } from './plant-form';
import { asSentence, problemOf } from './problems';

const EMPTY: PlantFormValues = { id: '', name: '', tag: '' };

type CreatePlantFormProps = {
  /** The id input, so the empty state's "add the first" can bring the cursor here. */
  idInputRef: RefObject<HTMLInputElement | null>;
};

export function CreatePlantForm({ idInputRef }: CreatePlantFormProps) {
  const utils = trpc.useUtils();
  const [values, setValues] = useState<PlantFormValues>(EMPTY);
  const [touched, setTouched] = useState<Partial<Record<PlantField, boolean>>>({});
  const [errors, setErrors] = useState<PlantFormErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [created, setCreated] = useState<string | null>(null);
  const nameRef = useRef<HTMLInputElement>(null);
  const tagRef = useRef<HTMLInputElement>(null);
  const pressingSubmitRef = useRef(false);
  const refs: Record<PlantField, RefObject<HTMLInputElement | null>> = { id: idInputRef, name: nameRef, tag: tagRef };

  const create = trpc.plants.create.useMutation({
    onSuccess: async (plant) => {
      setValues(EMPTY);
      setTouched({});
      setErrors({});
      setCreated(`Added plant “${plant.name}” with id ${plant.id.toString()}${plant.tag ? `, tag “${plant.tag}”` : ''}.`);
      idInputRef.current?.focus();
      await utils.plants.list.invalidate();
    },
    onError: (error) => {
      const problem = problemOf(error);
      const field = problem.field as PlantField | null;
      if (field && PLANT_FIELDS.includes(field)) {
        setErrors({ [field]: asSentence(problem.message) });
        refs[field].current?.focus();
      } else if (problem.status !== 401) {
        setFormError(`The plant was not added: ${problem.message}`);
      }
    },
  });

  /** Field-level messages as the user leaves a field, and live once a field has shown one. */
  function revalidate(next: PlantFormValues, nextTouched: Partial<Record<PlantField, boolean>>) {
    const result = validatePlantForm(next);
    const all = result.ok ? {} : result.errors;
    setErrors(Object.fromEntries(PLANT_FIELDS.filter((field) => nextTouched[field] && all[field]).map((field) => [field, all[field]])));
  }

  function change(field: PlantField, value: string) {
    const next = { ...values, [field]: value };
    setValues(next);
    setCreated(null);
    setFormError(null);
    if (errors[field]) revalidate(next, touched);
  }

  function blur(field: PlantField) {
    // Leaving an untouched empty field says nothing yet: the user may just be passing through.
    if (!touched[field] && values[field] === '') return;
    // Left by pressing the submit button, which checks everything anyway. A message appearing now would
    // move the button away under the pointer between press and release, and the click would be lost.
    if (pressingSubmitRef.current) {
      pressingSubmitRef.current = false;
      return;
    }
    const nextTouched = { ...touched, [field]: true };
    setTouched(nextTouched);
    revalidate(values, nextTouched);
  }

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (create.isPending) return;
    setCreated(null);
    setFormError(null);
    const result = validatePlantForm(values);
    setTouched({ id: true, name: true, tag: true });
    if (!result.ok) {
      setErrors(result.errors);
      const first = PLANT_FIELDS.find((field) => result.errors[field]);
      if (first) refs[first].current?.focus();
      return;
    }
    setErrors({});
    create.mutate(result.plant);
  }

  return (
    <form className="card create-form" onSubmit={onSubmit} noValidate aria-labelledby="create-title" aria-busy={create.isPending}>
      <h3 id="create-title">Add a plant</h3>
      <div className="create-form__fields">
        <Field
          id="plant-id"
          label="Id"
          hint="A whole number, unique in the store (up to 9223372036854775807)."
          inputMode="numeric"
          autoComplete="off"
          spellCheck={false}
          value={values.id}
          onChange={(event) => change('id', event.target.value)}
          onBlur={() => blur('id')}
          error={errors.id}
          inputRef={idInputRef}
          required
          className="field--id"
        />
        <Field
          id="plant-name"
          label="Name"
          hint={`Up to ${NAME_MAX_LENGTH} characters.`}
          autoComplete="off"
          value={values.name}
          onChange={(event) => change('name', event.target.value)}
          onBlur={() => blur('name')}
          error={errors.name}
          inputRef={nameRef}
          required
        />
        <Field
          id="plant-tag"
          label={
            <>
              Tag <span className="muted">(optional)</span>
            </>
          }
          hint={`Up to ${TAG_MAX_LENGTH} characters; leave empty for none.`}
          autoComplete="off"
          value={values.tag}
          onChange={(event) => change('tag', event.target.value)}
          onBlur={() => blur('tag')}
          error={errors.tag}
          inputRef={tagRef}
        />
      </div>
      <div className="form-actions">
        <button
          type="submit"
          className="button button--primary"
          aria-disabled={create.isPending}
          onPointerDown={() => {
            pressingSubmitRef.current = true;
          }}
          onPointerUp={() => {
            pressingSubmitRef.current = false;
          }}
        >
          {create.isPending ? (
            <>
              <span className="spinner" aria-hidden="true" /> Adding…
            </>
          ) : (
            'Add plant'
          )}
        </button>
        <p className="form-status" role="status">
          {created}
        </p>
      </div>
      {formError ? (
        <p className="notice notice--error" role="alert">
          {formError}
        </p>
      ) : null}
    </form>
  );
}
