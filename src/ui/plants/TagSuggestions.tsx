'use client';

import { keepPreviousData } from '@tanstack/react-query';

import { TAG_MAX_LENGTH } from '@/shared/limits';
import { trpc } from '@/ui/trpc';

const count = new Intl.NumberFormat();

/** The id of the list of suggestions that a tag input names in its `list` attribute. */
export const tagSuggestionsId = (inputId: string) => `${inputId}-suggestions`;

/**
 * The tags that exist (in what this person sees), most used first, whose start matches what is typed in any case,
 * each with how many plants have it: a `<datalist>` the tag input names (`list`), so the browser offers them as
 * the person types and the field stays free text (a new tag is allowed). Wherever a tag is typed: the add form,
 * the row editor, the bulk re-tag. Seeing "Tropical 979" beside "tropical 19,547" is what keeps a new plant out of
 * the rarer spelling.
 */
export function TagSuggestions({ inputId, text }: { inputId: string; text: string }) {
  const prefix = text.trim();
  const suggestions = trpc.plants.tags.useQuery(prefix ? { prefix } : {}, {
    enabled: prefix.length <= TAG_MAX_LENGTH,
    placeholderData: keepPreviousData,
    staleTime: 30_000,
  });
  return (
    <datalist id={tagSuggestionsId(inputId)}>
      {(suggestions.data ?? []).map((option) => (
        <option key={option.tag} value={option.tag} label={`${count.format(option.count)} ${option.count === 1 ? 'plant' : 'plants'}`} />
      ))}
    </datalist>
  );
}
