import { registerConnector } from "../../connectors/index.js";
import { fakeDropSpec, fakeSpec } from "./fake-connector.js";

// Preloaded (`node --import`) into a CLI run: the fake types exist there as if connectors/index.ts listed them.
registerConnector(fakeSpec);
registerConnector(fakeDropSpec);
