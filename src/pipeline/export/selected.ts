// What the select stage of an export yields, in a file of its own: the
// producers (products and fitment in select.ts, orders in orders.ts) and the
// dispatch in select.ts all speak it, and none of them has to import another
// for the shape.

export interface SelectedRow {
  kind: "row";
  /** The service record as the mapper reads it: nested parts as dotted keys (`billing.city`, `fitment.make`). */
  record: Record<string, unknown>;
  /** The output row's identity in the export snapshot. */
  key: string;
  /** What diffing treats as one unit: the order for order rows, else the row itself. */
  group: string;
  /** Orders: the order's own structure for templates (`order`, `billing`, `shipping`, `items`, and `item` for a line-item row). */
  nested?: Record<string, unknown>;
}

/** A service record that cannot become rows (a fitment value that is not JSON); the run goes on. */
export interface SelectProblem {
  kind: "problem";
  identifier: string;
  message: string;
}

export type Selected = SelectedRow | SelectProblem;
