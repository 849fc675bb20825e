import { connectorConformance } from "./conformance.js";
import { httpTarget } from "./http-target.js";

connectorConformance("http", httpTarget);
