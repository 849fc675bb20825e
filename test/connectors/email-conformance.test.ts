import { DovecotServer } from "../helpers/dovecot.js";
import { connectorConformance } from "./conformance.js";
import { emailTarget } from "./email-target.js";

if (!DovecotServer.available()) throw new Error("dovecot is not installed: run scripts/test-servers.sh");
connectorConformance("email", emailTarget);
