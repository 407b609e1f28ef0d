import type { ReactNode } from "react";

/**
 * A confirm dialog's two buttons: Cancel, and the dangerous action (held while its request runs, so a
 * second click sends nothing).
 */
export function ConfirmActions(props: {
  onCancel: () => void;
  onConfirm: () => void;
  pending: boolean;
  children: ReactNode;
}) {
  return (
    <div className="actions">
      <button type="button" className="button" onClick={props.onCancel}>
        Cancel
      </button>
      <button
        type="button"
        className="button button-danger"
        disabled={props.pending}
        onClick={props.onConfirm}
      >
        {props.children}
      </button>
    </div>
  );
}
