/**
 * A command's action loaded when the command runs. Commander needs every
 * command's name, arguments and options to parse or print `--help`, but only
 * the chosen command's implementation: the others, with their databases,
 * service client, connectors and parsers, are never loaded.
 */
export function lazyAction<A extends unknown[]>(load: () => Promise<(...args: A) => Promise<void>>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const action = await load();
    await action(...args);
  };
}
