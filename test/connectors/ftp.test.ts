import { connectorConformance } from "./conformance.js";
import { ftpTarget } from "./ftp-target.js";

connectorConformance("ftp", () => ftpTarget("none", { type: "ftp" }));
