import { ConveyorError } from "../../src/errors.js";

/** The ConveyorError a promise rejects with; fails the test when it resolves or rejects with anything else. */
export async function caught(p: Promise<unknown>): Promise<ConveyorError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ConveyorError) return err;
    throw err;
  }
  throw new Error("expected a ConveyorError");
}
