'use client';

import { Check, Plus } from 'lucide-react';
import { type FormEvent, useId, useRef, useState } from 'react';

import { WEBHOOK_DESCRIPTION_MAX_LENGTH } from '@/shared/limits';
import { WEBHOOK_EVENTS, type WebhookEndpoint, type WebhookEventType } from '@/shared/webhooks';
import { type RouterOutputs, trpc } from '@/ui/trpc';

import { Modal } from '../ConfirmDialog';
import { Field } from '../Field';
import { problemOf } from '../problems';
import {
  EMPTY_ENDPOINT_FORM,
  ENDPOINT_FIELDS,
  type EndpointField,
  endpointChanges,
  type EndpointFormErrors,
  endpointFormValues,
  type EndpointFormValues,
  validateEndpointForm,
  webhookSentence,
} from './endpoint-form';

export type CreatedEndpoint = RouterOutputs['webhooks']['create'];

const EVENT_HELP: Record<WebhookEventType, string> = {
  'plant.created': 'a plant was added',
  'plant.deleted': 'a plant was deleted',
};

type Props =
  | { mode: 'add'; onCreated: (endpoint: CreatedEndpoint) => void; onCancel: () => void }
  | { mode: 'edit'; endpoint: WebhookEndpoint; onSaved: (endpoint: WebhookEndpoint | null) => void; onCancel: () => void };

/**
 * Adds an endpoint or changes one, in a dialog: URL, events, enabled and a note. Checked with the router's
 * schema before sending; where the URL may point (the SSRF rules) is the server's answer, shown by the field.
 */
export function EndpointDialog(props: Props) {
  const utils = trpc.useUtils();
  const editing = props.mode === 'edit' ? props.endpoint : null;
  const [values, setValues] = useState<EndpointFormValues>(editing ? endpointFormValues(editing) : EMPTY_ENDPOINT_FORM);
  const [errors, setErrors] = useState<EndpointFormErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const urlRef = useRef<HTMLInputElement>(null);
  const descriptionRef = useRef<HTMLInputElement>(null);
  const eventsRef = useRef<HTMLFieldSetElement>(null);
  const enabledId = useId();
  const prefix = editing ? `endpoint-${editing.id}` : 'endpoint-new';

  const focusField = (field: EndpointField) => {
    if (field === 'events') eventsRef.current?.querySelector('input')?.focus();
    else (field === 'url' ? urlRef : descriptionRef).current?.focus();
  };

  const onError = (error: unknown) => {
    const problem = problemOf(error);
    if (problem.status === 401) return;
    const field = problem.field as EndpointField | null;
    if (field && ENDPOINT_FIELDS.includes(field)) {
      setErrors({ [field]: webhookSentence(problem.message) });
      focusField(field);
    } else {
      setFormError(`${editing ? 'The endpoint was not saved' : 'The endpoint was not added'}: ${problem.message}.`);
    }
  };

  const create = trpc.webhooks.create.useMutation({
    onSuccess: async (created) => {
      if (props.mode === 'add') props.onCreated(created);
      await utils.webhooks.list.invalidate();
    },
    onError,
  });
  const update = trpc.webhooks.update.useMutation({
    onSuccess: async (saved) => {
      if (props.mode === 'edit') props.onSaved(saved);
      await Promise.all([utils.webhooks.list.invalidate(), utils.webhooks.get.invalidate({ id: saved.id })]);
    },
    onError,
  });
  const pending = create.isPending || update.isPending;

  function change(next: EndpointFormValues, field: EndpointField | null) {
    setValues(next);
    setFormError(null);
    // A field's message goes once the field is being changed.
    if (field && errors[field]) setErrors((current) => ({ ...current, [field]: undefined }));
  }

  function toggleEvent(event: WebhookEventType, on: boolean) {
    const events = WEBHOOK_EVENTS.filter((each) => (each === event ? on : values.events.includes(each)));
    change({ ...values, events }, 'events');
  }

  function onSubmit(submitted: FormEvent) {
    submitted.preventDefault();
    if (pending) return;
    setFormError(null);
    const result = validateEndpointForm(values);
    if (!result.ok) {
      setErrors(result.errors);
      const first = ENDPOINT_FIELDS.find((field) => result.errors[field]);
      if (first) focusField(first);
      return;
    }
    setErrors({});
    if (props.mode === 'add') {
      create.mutate(result.endpoint);
      return;
    }
    const changes = endpointChanges(props.endpoint, result.endpoint);
    if (Object.keys(changes).length === 0) props.onSaved(null);
    else update.mutate({ id: props.endpoint.id, ...changes });
  }

  const title = editing ? `Edit endpoint ${editing.id}` : 'Add a webhook endpoint';
  const serverDisabled = editing && !editing.enabled && editing.disabledReason !== null;
  return (
    <Modal title={title} onCancel={props.onCancel} initialFocus={urlRef} describedBy={false} className="dialog--wide">
      <form className="form-grid" onSubmit={onSubmit} noValidate aria-busy={pending} aria-label={title}>
        <Field
          id={`${prefix}-url`}
          label="URL"
          hint="Where events are POSTed: an https:// address (http:// only to this machine, where the server allows it)."
          type="url"
          inputMode="url"
          autoComplete="off"
          spellCheck={false}
          value={values.url}
          onChange={(event) => change({ ...values, url: event.target.value }, 'url')}
          error={errors.url}
          inputRef={urlRef}
          required
        />
        <fieldset
          className={errors.events ? 'fieldset field--invalid' : 'fieldset'}
          ref={eventsRef}
          aria-describedby={errors.events ? `${prefix}-events-error` : undefined}
        >
          <legend>Events</legend>
          {WEBHOOK_EVENTS.map((event) => (
            <label key={event} className="check">
              <input type="checkbox" checked={values.events.includes(event)} onChange={(input) => toggleEvent(event, input.target.checked)} />
              <span>
                <code>{event}</code> <span className="muted">— {EVENT_HELP[event]}</span>
              </span>
            </label>
          ))}
          {errors.events ? (
            <p className="field__error" id={`${prefix}-events-error`}>
              {errors.events}
            </p>
          ) : null}
        </fieldset>
        <div className="field">
          <label className="check" htmlFor={enabledId}>
            <input id={enabledId} type="checkbox" checked={values.enabled} onChange={(input) => change({ ...values, enabled: input.target.checked }, null)} aria-describedby={`${enabledId}-hint`} />
            <span>Enabled</span>
          </label>
          <p className="field__hint" id={`${enabledId}-hint`}>
            {serverDisabled && values.enabled
              ? 'Enabling it again clears its failure record and sends the deliveries waiting for it.'
              : values.enabled
                ? 'Events are queued for it and sent.'
                : 'No new events are queued for it while it is disabled; those already waiting stay waiting.'}
          </p>
        </div>
        <Field
          id={`${prefix}-description`}
          label={
            <>
              Note <span className="muted">(optional)</span>
            </>
          }
          hint={`What receives these events, for the people who read this list. Up to ${WEBHOOK_DESCRIPTION_MAX_LENGTH} characters.`}
          autoComplete="off"
          value={values.description}
          onChange={(event) => change({ ...values, description: event.target.value }, 'description')}
          error={errors.description}
          inputRef={descriptionRef}
        />
        {formError ? (
          <p className="notice notice--error" role="alert">
            {formError}
          </p>
        ) : null}
        <div className="dialog__actions">
          <button type="button" className="button" onClick={props.onCancel}>
            Cancel
          </button>
          <button type="submit" className="button button--primary" aria-disabled={pending}>
            {pending ? <span className="spinner" aria-hidden="true" /> : editing ? <Check className="icon" aria-hidden="true" /> : <Plus className="icon" aria-hidden="true" />}
            {editing ? (pending ? 'Saving…' : 'Save endpoint') : pending ? 'Adding…' : 'Add endpoint'}
          </button>
        </div>
      </form>
    </Modal>
  );
}
