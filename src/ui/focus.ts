/**
 * After signing in through the form, the first view to appear puts the cursor on its heading, so a keyboard
 * user starts at the content instead of on a form that is gone. A flag, since the view mounts after a redirect.
 */
let pending = false;

export function focusViewHeadingNext(): void {
  pending = true;
}

/** Called by a view once its heading is in the document. */
export function takeHeadingFocus(heading: HTMLElement | null): void {
  if (!pending || !heading) return;
  pending = false;
  heading.focus();
}

/** The sign-in did not go through: no view should take the cursor later. */
export function forgetHeadingFocus(): void {
  pending = false;
}
