'use client';

import { Plus } from 'lucide-react';
import { type FormEvent, type RefObject, useRef, useState } from 'react';

import { NAME_MAX_LENGTH, type Plant, TAG_MAX_LENGTH } from '@/shared/plants';
import { trpc } from '@/ui/trpc';

import { Modal } from '../ConfirmDialog';
import { Field } from '../Field';
import { PLANT_FIELDS, type PlantField, type PlantFormErrors, type PlantFormValues, validatePlantForm } from '../plant-form';
import { asSentence, problemOf } from '../problems';

/**
 * The add form, in a dialog. It proposes an id that is free (plants.suggestId): one past the highest id
 * the person can see, so nobody has to invent one or collide with ids they cannot see. Messages appear
 * when a field is left with something wrong in it, and on submit; a successful add closes the dialog.
 */
export function AddPlantDialog({ onAdded, onCancel }: { onAdded: (plant: Plant) => void; onCancel: () => void }) {
  const utils = trpc.useUtils();
  const suggestion = trpc.plants.suggestId.useQuery(undefined, { staleTime: 0, gcTime: 0, refetchOnWindowFocus: false });
  const [typed, setValues] = useState<PlantFormValues>({ id: '', name: '', tag: '' });
  const [idEdited, setIdEdited] = useState(false);
  const [touched, setTouched] = useState<Partial<Record<PlantField, boolean>>>({});
  const [errors, setErrors] = useState<PlantFormErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const idRef = useRef<HTMLInputElement>(null);
  const nameRef = useRef<HTMLInputElement>(null);
  const tagRef = useRef<HTMLInputElement>(null);
  const refs: Record<PlantField, RefObject<HTMLInputElement | null>> = { id: idRef, name: nameRef, tag: tagRef };

  // The proposal fills the id field once it arrives, unless the person typed an id of their own meanwhile.
  const values: PlantFormValues = idEdited ? typed : { ...typed, id: suggestion.data?.id.toString() ?? '' };

  const create = trpc.plants.create.useMutation({
    onSuccess: async (plant) => {
      onAdded(plant);
      await utils.plants.page.invalidate();
    },
    onError: (error) => {
      const problem = problemOf(error);
      const field = problem.field as PlantField | null;
      if (field && PLANT_FIELDS.includes(field)) {
        setErrors({ [field]: asSentence(problem.message) });
        refs[field].current?.focus();
      } else if (problem.status !== 401) {
        setFormError(`The plant was not added: ${problem.message}.`);
      }
    },
  });

  function revalidate(next: PlantFormValues, nextTouched: Partial<Record<PlantField, boolean>>) {
    const result = validatePlantForm(next);
    const all = result.ok ? {} : result.errors;
    setErrors(Object.fromEntries(PLANT_FIELDS.filter((field) => nextTouched[field] && all[field]).map((field) => [field, all[field]])));
  }

  function change(field: PlantField, value: string) {
    const next = { ...values, [field]: value };
    if (field === 'id') setIdEdited(true);
    setValues(next);
    setFormError(null);
    if (errors[field]) revalidate(next, touched);
  }

  function blur(field: PlantField) {
    // Passing through an empty field says nothing yet.
    if (!touched[field] && values[field] === '') return;
    const nextTouched = { ...touched, [field]: true };
    setTouched(nextTouched);
    revalidate(values, nextTouched);
  }

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (create.isPending) return;
    setFormError(null);
    const result = validatePlantForm(values);
    setTouched({ id: true, name: true, tag: true });
    if (!result.ok) {
      setErrors(result.errors);
      // In the order the dialog shows them.
      const first = (['name', 'tag', 'id'] as const).find((field) => result.errors[field]);
      if (first) refs[first].current?.focus();
      return;
    }
    setErrors({});
    create.mutate(result.plant);
  }

  return (
    <Modal title="Add a plant" onCancel={onCancel} initialFocus={nameRef} describedBy={false}>
      <form className="form-grid" onSubmit={onSubmit} noValidate aria-busy={create.isPending} aria-label="Add a plant">
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
          hint={`Up to ${TAG_MAX_LENGTH} characters, such as “tropical”. Leave empty for none.`}
          autoComplete="off"
          value={values.tag}
          onChange={(event) => change('tag', event.target.value)}
          onBlur={() => blur('tag')}
          error={errors.tag}
          inputRef={tagRef}
        />
        <Field
          id="plant-id"
          label="Id"
          hint={suggestion.isPending && !idEdited ? 'Finding a free id…' : 'A free id is proposed; any other whole number that is not taken works too.'}
          inputMode="numeric"
          autoComplete="off"
          spellCheck={false}
          value={values.id}
          onChange={(event) => change('id', event.target.value)}
          onBlur={() => blur('id')}
          error={errors.id}
          inputRef={idRef}
          required
        />
        {formError ? (
          <p className="notice notice--error" role="alert">
            {formError}
          </p>
        ) : null}
        <div className="dialog__actions">
          <button type="button" className="button" onClick={onCancel}>
            Cancel
          </button>
          <button type="submit" className="button button--primary" aria-disabled={create.isPending}>
            {create.isPending ? <span className="spinner" aria-hidden="true" /> : <Plus className="icon" aria-hidden="true" />}
            {create.isPending ? 'Adding…' : 'Add plant'}
          </button>
        </div>
      </form>
    </Modal>
  );
}
