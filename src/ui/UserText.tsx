/**
 * Text a user typed (a plant name, a tag, a user name), wherever it is shown: in a <bdi>, so a
 * right-to-left override inside it (`Fern\u202e`) cannot reverse the text around it, dialogs included.
 * `clamp` shows two lines at most; the whole text stays in the title and in the edit form.
 */
export function UserText({ children, clamp = false, className }: { children: string; clamp?: boolean; className?: string }) {
  const classes = ['user-text', clamp ? 'clamp' : '', className ?? ''].filter(Boolean).join(' ');
  return (
    <bdi className={classes} title={clamp ? children : undefined} dir="auto">
      {children}
    </bdi>
  );
}
