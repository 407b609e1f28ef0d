import { useEffect, useRef, type ReactNode } from "react";

/** A modal on the native `<dialog>`: focus moves in, Escape closes, the page behind is inert. */
export function Dialog(props: {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ReactNode;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      className={props.wide ? "dialog dialog-wide" : "dialog"}
      aria-label={props.title}
      onClose={props.onClose}
    >
      {props.open && (
        <>
          <header className="dialog-header">
            <h2>{props.title}</h2>
            <button type="button" className="icon-button" aria-label="Close" onClick={props.onClose}>
              ×
            </button>
          </header>
          <div className="dialog-body">{props.children}</div>
        </>
      )}
    </dialog>
  );
}
