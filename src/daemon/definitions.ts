import { parseAutomation, type Automation, type Problem } from "../definition/index.js";
import { ConveyorError } from "../errors.js";
import { describeProblem } from "../definition/index.js";
import type { Catalogue, PublishedAutomation } from "./catalogue.js";
import { flagProblems, installedDefinition, mergePatch, parameterList, sealDefinition, sealParameters, textOf, truthyFlag, withParameter } from "./definition-body.js";
import type { AutomationKind, DefinitionStore, StoredAutomation } from "./definitions-store.js";
import { feedingParameters, openSecrets, sealSecrets } from "./secret-fields.js";
import { definitionVersion, toSchedulable, type SchedulableAutomation } from "./types.js";

type Json = Record<string, unknown>;

export interface Effective {
  stored: StoredAutomation;
  /** The definition a run uses (installed: published configuration + the installer's values). */
  raw: Json;
  automation: Automation;
  published?: PublishedAutomation;
}

/** Every problem in one error; the API lists each in the validation envelope. */
function invalid(problems: Problem[]): ConveyorError {
  const messages = problems.map(describeProblem);
  return new ConveyorError("definition_invalid", messages.join("; "), { details: { problems: messages } });
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

const KINDS: readonly AutomationKind[] = ["custom", "installed"];

/**
 * The automations of every account, validated on every write: custom ones are
 * whole definitions, installed ones a published automation plus the
 * installer's values. Every write either passes `parseAutomation` with the
 * result stored, or changes nothing and reports every problem.
 */
export class DefinitionService {
  constructor(
    private readonly store: DefinitionStore,
    private catalogue: Catalogue,
    private readonly key: Buffer,
    private readonly onChange: () => void = () => undefined,
  ) {}

  get published(): Catalogue {
    return this.catalogue;
  }

  setCatalogue(catalogue: Catalogue): void {
    this.catalogue = catalogue;
    this.onChange();
  }

  /** One automation of the account; another account's id is answered exactly like a missing one. */
  async own(account: string, kind: AutomationKind, id: number): Promise<StoredAutomation> {
    const stored = Number.isInteger(id) && id > 0 ? await this.store.get(id) : null;
    if (!stored || stored.account !== account || stored.kind !== kind) throw new ConveyorError("definition_not_found", `no ${kind} automation with id ${id}`);
    return stored;
  }

  async list(account: string, kind: AutomationKind): Promise<StoredAutomation[]> {
    return this.store.list(account, kind);
  }

  async createCustom(account: string, body: unknown, source?: { file: string; hash: string }): Promise<StoredAutomation> {
    if (!isObject(body)) throw invalid([{ path: "", message: "the body must be a JSON object (an automation definition)" }]);
    const sealed = sealDefinition(body, null, this.key);
    const automation = this.validate(sealed);
    const slug = await this.freeSlug(account, automation.slug, typeof body.slug === "string" && body.slug !== "", null);
    const created = await this.store.insert({ account, kind: "custom", slug, body: sealSecrets({ ...sealed, slug }, this.key), source: source?.file ?? null, sourceHash: source?.hash ?? null });
    this.onChange();
    return created;
  }

  async patchCustom(account: string, id: number, patch: unknown): Promise<StoredAutomation> {
    const stored = await this.own(account, "custom", id);
    if (!isObject(patch)) throw invalid([{ path: "", message: "the body must be a JSON object with the fields to change" }]);
    // Against the opened body: a value the listing showed partly masked is recognised by its clear form.
    const merged = sealDefinition(mergePatch(stored.body, patch), openSecrets(stored.body, this.key), this.key);
    const automation = this.validate(merged);
    const explicit = typeof patch.slug === "string" && patch.slug !== "";
    const slug = explicit || automation.slug !== stored.slug ? await this.freeSlug(account, explicit ? automation.slug : stored.slug, explicit, id) : stored.slug;
    await this.store.update(id, { slug, body: sealSecrets({ ...merged, slug }, this.key) });
    this.onChange();
    return this.own(account, "custom", id);
  }

  /** A definition file changed since it was loaded: the file's content replaces the stored definition. */
  async replaceCustom(account: string, id: number, body: unknown, sourceHash: string): Promise<StoredAutomation> {
    const stored = await this.own(account, "custom", id);
    if (!isObject(body)) throw invalid([{ path: "", message: "a definition is a JSON object" }]);
    const sealed = sealDefinition(body, openSecrets(stored.body, this.key), this.key);
    const automation = this.validate(sealed);
    const slug = await this.freeSlug(account, automation.slug, true, id);
    await this.store.update(id, { slug, body: sealSecrets({ ...sealed, slug }, this.key), sourceHash });
    this.onChange();
    return this.own(account, "custom", id);
  }

  async remove(account: string, kind: AutomationKind, id: number): Promise<void> {
    await this.own(account, kind, id);
    await this.store.delete(id);
    this.onChange();
  }

  async setParameter(account: string, kind: AutomationKind, id: number, name: string, body: unknown): Promise<StoredAutomation> {
    const stored = await this.own(account, kind, id);
    if (!isObject(body) || !("value" in body)) {
      throw invalid([{ path: "value", message: "required", allowed: "a body {encrypted: boolean, value: string or null}" }]);
    }
    if (body.value !== null && typeof body.value !== "string" && typeof body.value !== "number" && typeof body.value !== "boolean") {
      throw invalid([{ path: "value", message: "must be a string or null" }]);
    }
    const encrypted = flagProblems(body.encrypted, "encrypted");
    if (encrypted.length > 0) throw invalid(encrypted);
    if (kind === "installed") {
      const published = this.publishedOf(stored);
      const names = parameterList(published.raw.parameters).map((p) => textOf(p.name));
      if (!names.includes(name)) throw new ConveyorError("not_found", `the automation has no parameter "${name}"; its parameters: ${names.join(", ") || "(none)"}`);
    }
    const parameters = sealParameters(withParameter(stored.body.parameters, name, { value: body.value, encrypted: body.encrypted }), stored.body.parameters, this.key);
    const next = { ...stored.body, parameters };
    this.validate(kind === "installed" ? installedDefinition(this.publishedOf(stored).raw, next) : next);
    await this.store.update(id, { slug: stored.slug, body: sealSecrets(next, this.key, kind === "installed" ? feedingParameters(this.publishedOf(stored).raw) : undefined) });
    this.onChange();
    return this.own(account, kind, id);
  }

  async install(account: string, body: unknown): Promise<StoredAutomation> {
    if (!isObject(body)) throw invalid([{ path: "", message: "the body must be a JSON object {shared_id, active, parameters}" }]);
    const problems: Problem[] = [];
    const sharedId = Number(body.shared_id);
    const published = Number.isInteger(sharedId) ? this.catalogue.get(sharedId) : undefined;
    if (body.shared_id === undefined) problems.push({ path: "shared_id", message: "required" });
    else if (!published) problems.push({ path: "shared_id", message: `no published automation ${JSON.stringify(body.shared_id)}`, allowed: this.catalogue.list().map((p) => String(p.sharedId)).join(", ") || "(the catalogue is empty)" });
    if (body.active === undefined) problems.push({ path: "active", message: "required" });
    problems.push(...flagProblems(body.active, "active"));
    const install: Json = { active: truthyFlag(body.active), parameters: [] };
    if (typeof body.schedule === "string") install.schedule = body.schedule;
    problems.push(...this.installParameterProblems(body.parameters, published));
    if (problems.length > 0 || !published) throw invalid(problems);
    install.parameters = sealParameters(body.parameters, null, this.key);
    const automation = this.validate(installedDefinition(published.raw, install));
    const slug = await this.freeSlug(account, automation.slug, false, null);
    const created = await this.store.insert({ account, kind: "installed", slug, sharedId: String(published.sharedId), body: sealSecrets(install, this.key, feedingParameters(published.raw)) });
    this.onChange();
    return created;
  }

  async patchInstalled(account: string, id: number, patch: unknown): Promise<StoredAutomation> {
    const stored = await this.own(account, "installed", id);
    if (!isObject(patch)) throw invalid([{ path: "", message: "the body must be a JSON object {active, parameters}" }]);
    const allowed = ["active", "parameters", "schedule", "timezone"];
    const unknown = Object.keys(patch).filter((k) => !allowed.includes(k));
    const problems: Problem[] = unknown.map((k) => ({ path: k, message: "cannot be changed on an installed automation", allowed: allowed.join(", ") }));
    const published = this.publishedOf(stored);
    problems.push(...flagProblems(patch.active, "active"));
    if (patch.parameters !== undefined) problems.push(...this.installParameterProblems(patch.parameters, published));
    if (problems.length > 0) throw invalid(problems);
    const next: Json = { ...stored.body };
    if (patch.active !== undefined) next.active = truthyFlag(patch.active);
    for (const k of ["schedule", "timezone"]) if (typeof patch[k] === "string") next[k] = patch[k];
    if (patch.parameters !== undefined) {
      let parameters: unknown = stored.body.parameters;
      for (const p of parameterList(patch.parameters)) parameters = withParameter(parameters, textOf(p.name), { value: p.value, encrypted: p.encrypted });
      next.parameters = sealParameters(parameters, stored.body.parameters, this.key);
    }
    this.validate(installedDefinition(published.raw, next));
    await this.store.update(id, { slug: stored.slug, body: sealSecrets(next, this.key, feedingParameters(published.raw)) });
    this.onChange();
    return this.own(account, "installed", id);
  }

  /** The definition a run of this automation uses; throws with every problem when it no longer validates. */
  effective(stored: StoredAutomation): Effective {
    // Opened here, once: the API masks the opened form as it always did, and a run connects with it.
    const body = openSecrets(stored.body, this.key);
    if (stored.kind === "custom") return { stored, raw: body, automation: this.validate(body) };
    const published = this.publishedOf(stored);
    const raw = installedDefinition(published.raw, body);
    return { stored, raw, automation: this.validate(raw), published };
  }

  async byKey(key: string): Promise<StoredAutomation | null> {
    const id = Number(key);
    return Number.isInteger(id) && id > 0 ? this.store.get(id) : null;
  }

  /** Every automation the scheduler should know; one that no longer validates is left out. `eventCatchUpMs`: CONVEYOR_EVENT_CATCHUP. */
  async schedulables(eventCatchUpMs?: number): Promise<SchedulableAutomation[]> {
    const out: SchedulableAutomation[] = [];
    for (const stored of await this.store.all()) {
      try {
        const e = this.effective(stored);
        // Hashed as stored, sealed: a hash of the opened form would be one of the clear secrets too.
        const sealed = e.published ? installedDefinition(e.published.raw, stored.body) : stored.body;
        out.push(toSchedulable(String(stored.id), stored.account, e.automation, definitionVersion(sealed), eventCatchUpMs));
      } catch {
        // Reported when someone runs or fetches it; a broken one must not stop the others being scheduled.
      }
    }
    return out;
  }

  async all(): Promise<StoredAutomation[]> {
    return this.store.all();
  }

  async bySlug(account: string, slug: string): Promise<StoredAutomation | null> {
    return this.store.bySlug(account, "custom", slug);
  }

  private publishedOf(stored: StoredAutomation): PublishedAutomation {
    const published = this.catalogue.get(Number(stored.sharedId));
    if (!published) {
      throw new ConveyorError("conflict", `installed automation ${stored.id} refers to published automation ${stored.sharedId ?? "?"}, which is no longer in the catalogue; delete it or restore the published file`);
    }
    return published;
  }

  private installParameterProblems(parameters: unknown, published: PublishedAutomation | undefined): Problem[] {
    if (parameters === undefined) return [];
    if (!Array.isArray(parameters)) return [{ path: "parameters", message: "must be an array of {encrypted, name, value}" }];
    const names = published ? parameterList(published.raw.parameters).map((p) => textOf(p.name)) : null;
    const problems: Problem[] = [];
    parameters.forEach((p: unknown, i) => {
      if (!isObject(p)) return problems.push({ path: `parameters[${i}]`, message: "must be an object {encrypted, name, value}" });
      for (const k of ["encrypted", "name", "value"]) if (!(k in p)) problems.push({ path: `parameters[${i}].${k}`, message: "required" });
      problems.push(...flagProblems(p.encrypted, `parameters[${i}].encrypted`));
      if (names && typeof p.name === "string" && !names.includes(p.name)) {
        problems.push({ path: `parameters[${i}].name`, message: `"${p.name}" is not a parameter of this automation`, allowed: names.join(", ") || "(none)" });
      }
      return undefined;
    });
    return problems;
  }

  /** Validated in clear: a sealed address or header must be checked for what it says, not for its ciphertext. */
  private validate(raw: Json): Automation {
    const parsed = parseAutomation(openSecrets(raw, this.key));
    if (!parsed.ok) throw invalid(parsed.problems);
    return parsed.automation;
  }

  /**
   * automations.md: a slug is unique per account, custom and installed
   * automations together (`conveyor run <slug>` names one). A generated one
   * gets a number, a chosen one that is taken is a problem.
   */
  private async freeSlug(account: string, slug: string, explicit: boolean, self: number | null): Promise<string> {
    const taken = async (s: string): Promise<boolean> => {
      for (const kind of KINDS) {
        const other = await this.store.bySlug(account, kind, s);
        if (other !== null && other.id !== self) return true;
      }
      return false;
    };
    if (!(await taken(slug))) return slug;
    if (explicit) throw invalid([{ path: "slug", message: `"${slug}" is already the slug of another automation of this account`, allowed: "a slug no other automation of the account uses" }]);
    for (let n = 2; ; n++) if (!(await taken(`${slug}-${n}`))) return `${slug}-${n}`;
  }
}
