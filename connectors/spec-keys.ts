import { z } from "zod";
import { flag, integer, nonEmpty, text } from "../src/schema-kit.js";

// Connection keys several types read: one schema each, so `address` is checked alike whichever spec lists it.

export const address = z.union([nonEmpty, z.array(nonEmpty).min(1)], { error: "expected a text, or an array of texts (e-mail recipients)" });
export const username = text;
export const password = text;
export const path = text;
export const port = integer(1, 65535);
export const validate = flag;

/** The keys of a server login: host, user and password. */
export const LOGIN_KEYS = { address, username, password } as const;
