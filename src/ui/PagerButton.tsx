import type { ChevronLeft } from 'lucide-react';

/** A pager's icon button: named for assistive technology and in its title; aria-disabled keeps it focusable. */
export function PagerButton({ label, disabled, onClick, icon: Icon }: { label: string; disabled: boolean; onClick: () => void; icon: typeof ChevronLeft }) {
  return (
    <button
      type="button"
      className="button icon-button"
      aria-label={label}
      title={label}
      aria-disabled={disabled}
      onClick={() => {
        if (!disabled) onClick();
      }}
    >
      <Icon className="icon" aria-hidden="true" />
    </button>
  );
}
