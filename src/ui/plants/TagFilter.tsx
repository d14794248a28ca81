'use client';

import { keepPreviousData } from '@tanstack/react-query';
import { Merge, Tag, X } from 'lucide-react';
import { type KeyboardEvent, useId, useState } from 'react';

import { trpc } from '@/ui/trpc';

import { UserText } from '../UserText';

const count = new Intl.NumberFormat();

/**
 * The tag filter, as a combobox (WAI-ARIA's "list autocomplete" pattern): typing offers the tags that exist
 * (in what this person sees), most used first, whose start matches in any case, with their counts; a tag
 * applies when it is chosen (click, or Enter on it), never while typing. Enter on text that is exactly a
 * tag (in any case) chooses that tag; Escape closes the list and puts back the applied tag.
 */
export function TagFilter({
  value,
  owner,
  onChoose,
  onMerge,
}: {
  value: string | undefined;
  owner: string | undefined;
  onChoose: (tag: string | undefined) => void;
  /** Merges the chosen tag into another: a bulk re-tag of every plant of the view, which has this tag. */
  onMerge?: () => void;
}) {
  const [text, setText] = useState(value ?? '');
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const [seen, setSeen] = useState(value);
  // The address changed the tag (Back, a link, Clear filters): the field shows it.
  if (seen !== value) {
    setSeen(value);
    setText(value ?? '');
  }
  const id = useId();
  const listId = `${id}-tags`;
  const prefix = text.trim();
  const suggestions = trpc.plants.tags.useQuery({ ...(prefix ? { prefix } : {}), ...(owner ? { owner } : {}) }, { enabled: open, placeholderData: keepPreviousData, staleTime: 30_000 });
  const options = open ? (suggestions.data ?? []) : [];

  const choose = (tag: string | undefined) => {
    setOpen(false);
    setActive(-1);
    setText(tag ?? '');
    if (tag !== value) onChoose(tag);
  };

  function onKeyDown(event: KeyboardEvent<HTMLInputElement>) {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (!open) return setOpen(true);
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setActive((index) => (options.length === 0 ? -1 : (index + step + options.length) % options.length));
    } else if (event.key === 'Enter') {
      event.preventDefault();
      if (prefix === '') return choose(undefined);
      const exact = (suggestions.data ?? []).find((option) => option.tag.toLocaleLowerCase() === prefix.toLocaleLowerCase());
      const picked = active >= 0 ? options[active] : exact;
      if (picked) choose(picked.tag);
      else setOpen(true);
    } else if (event.key === 'Escape') {
      if (open) {
        event.preventDefault();
        event.stopPropagation();
        setOpen(false);
        setActive(-1);
      }
      setText(value ?? '');
    }
  }

  const activeId = active >= 0 && options[active] ? `${listId}-${active}` : undefined;
  return (
    <div className="field combobox">
      <label htmlFor={`${id}-input`}>Tag</label>
      <div className={value && onMerge ? 'combobox__control combobox__control--two' : 'combobox__control'}>
        <Tag className="icon" aria-hidden="true" />
        <input
          id={`${id}-input`}
          role="combobox"
          aria-autocomplete="list"
          aria-expanded={open}
          aria-controls={listId}
          aria-activedescendant={activeId}
          aria-describedby={`${id}-hint`}
          autoComplete="off"
          spellCheck={false}
          maxLength={100}
          placeholder="Any tag"
          value={text}
          onChange={(event) => {
            setText(event.target.value);
            setOpen(true);
            setActive(-1);
          }}
          onFocus={() => setOpen(true)}
          onBlur={() => {
            setOpen(false);
            setText(value ?? '');
          }}
          onKeyDown={onKeyDown}
        />
        {value && onMerge ? (
          <button
            type="button"
            className="button button--small button--quiet icon-button combobox__merge"
            aria-label={`Merge the tag “${value}” into another`} title="Merge into another tag" onClick={onMerge}>
            <Merge className="icon" aria-hidden="true" />
          </button>
        ) : null}
        {value ? (
          <button type="button" className="button button--small button--quiet icon-button" aria-label={`Remove the tag filter “${value}”`} title="Any tag" onClick={() => choose(undefined)}>
            <X className="icon" aria-hidden="true" />
          </button>
        ) : null}
      </div>
      <span id={`${id}-hint`} className="sr-only">
        Type the start of a tag, then choose one of the tags that exist.
      </span>
      <ul id={listId} role="listbox" aria-label="Tags" className="combobox__list" hidden={!open || options.length === 0 && prefix === ''}>
        {options.map((option, index) => (
          <li
            key={option.tag}
            id={`${listId}-${index}`}
            role="option"
            aria-selected={index === active}
            className="combobox__option"
            // Chosen before the input's blur closes the list.
            onPointerDown={(event) => {
              event.preventDefault();
              choose(option.tag);
            }}
          >
            <UserText className="one-line">{option.tag}</UserText>
            <span className="combobox__count">{count.format(option.count)}</span>
          </li>
        ))}
        {open && options.length === 0 && prefix !== '' && !suggestions.isFetching ? (
          <li role="option" aria-selected={false} aria-disabled="true" className="combobox__empty">
            No tag starts with “<UserText>{prefix}</UserText>”
          </li>
        ) : null}
      </ul>
    </div>
  );
}
