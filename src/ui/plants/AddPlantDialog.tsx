'use client';

import { Plus } from 'lucide-react';
import { type FormEvent, useRef, useState } from 'react';

import { isOptionalPlantField, type Plant, PLANT_FIELD_NAMES } from '@/shared/plants';
import { trpc } from '@/ui/trpc';

import { Modal } from '../ConfirmDialog';
import { Field } from '../Field';
import { TagSuggestions, tagSuggestionsId } from './TagSuggestions';
import { EMPTY_PLANT_FORM, PLANT_FIELDS, type PlantField, type PlantFormErrors, type PlantFormValues, validatePlantForm } from '../plant-form';
import { asSentence, problemOf } from '../problems';
import { PLANT_FIELD_UI } from './fields';

/**
 * The add form, in a dialog: the plant's declared fields (shared/plants.ts) in their order, then the id. It proposes an id that is free (plants.suggestId): one past the highest id
 * the person can see, so nobody has to invent one or collide with ids they cannot see. Messages appear
 * when a field is left with something wrong in it, and on submit; a successful add closes the dialog.
 */
export function AddPlantDialog({
  onAdded,
  onSaving,
  onCancel,
}: {
  onAdded: (plant: Plant) => void;
  /** Just before the plant is sent: the live feed's echo of it is this tab's own. */
  onSaving: (id: bigint) => void;
  onCancel: () => void;
}) {
  const utils = trpc.useUtils();
  const suggestion = trpc.plants.suggestId.useQuery(undefined, { staleTime: 0, gcTime: 0, refetchOnWindowFocus: false });
  const [typed, setValues] = useState<PlantFormValues>(EMPTY_PLANT_FORM);
  const [idEdited, setIdEdited] = useState(false);
  const [touched, setTouched] = useState<Partial<Record<PlantField, boolean>>>({});
  const [errors, setErrors] = useState<PlantFormErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const inputs = useRef<Partial<Record<PlantField, HTMLInputElement | null>>>({});
  // The dialog opens on the first field (the name).
  const firstRef = useRef<HTMLInputElement>(null);
  const focus = (field: PlantField) => inputs.current[field]?.focus();

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
        focus(field);
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
    setTouched(Object.fromEntries(PLANT_FIELDS.map((field) => [field, true])));
    if (!result.ok) {
      setErrors(result.errors);
      // In the order the dialog shows them.
      const first = [...PLANT_FIELD_NAMES, 'id' as const].find((field) => result.errors[field]);
      if (first) focus(first);
      return;
    }
    setErrors({});
    onSaving(result.plant.id);
    create.mutate(result.plant);
  }

  return (
    <Modal title="Add a plant" onCancel={onCancel} initialFocus={firstRef} describedBy={false}>
      <form className="form-grid" onSubmit={onSubmit} noValidate aria-busy={create.isPending} aria-label="Add a plant">
        {PLANT_FIELD_NAMES.map((field, index) => {
          const ui = PLANT_FIELD_UI[field];
          const optional = isOptionalPlantField(field);
          return (
            <Field
              key={field}
              id={`plant-${field}`}
              label={
                optional ? (
                  <>
                    {ui.label} <span className="muted">(optional)</span>
                  </>
                ) : (
                  ui.label
                )
              }
              hint={ui.hint}
              autoComplete="off"
              value={values[field]}
              onChange={(event) => change(field, event.target.value)}
              onBlur={() => blur(field)}
              error={errors[field]}
              inputRef={(element) => {
                inputs.current[field] = element;
                if (index === 0) firstRef.current = element;
              }}
              required={!optional}
              {...(field === 'tag' ? { list: tagSuggestionsId(`plant-${field}`) } : {})}
            />
          );
        })}
        <TagSuggestions inputId="plant-tag" text={values.tag} />
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
          inputRef={(element) => {
            inputs.current.id = element;
          }}
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
