import path from "node:path";
import { atomicUpload, type RemoteUploadOps } from "./atomic.js";
import { partName, relativeDir, relativeJoin, remoteJoin, timestampedName } from "./paths.js";
import type { TransferResult } from "./types.js";

// The upload and move steps every folder server (ftp, ftps, sftp) takes alike; each protocol supplies the calls.

/** A folder server's calls on absolute remote paths. */
export interface FolderServer extends RemoteUploadOps {
  /** Creates the folder and its parents; an existing one is fine. */
  ensureDir(remote: string): Promise<void>;
  exists(remote: string): Promise<boolean>;
  /** A plain rename: the target is known to be free. */
  move(from: string, to: string): Promise<void>;
}

/** `rel` (checked, relative to `root`) uploaded atomically, its folder made first. */
export async function uploadInto(server: FolderServer, root: string, rel: string, localPath: string): Promise<TransferResult> {
  const dir = relativeDir(rel);
  if (dir !== "") await server.ensureDir(remoteJoin(root, dir));
  return atomicUpload(server, localPath, remoteJoin(root, rel), remoteJoin(root, partName(rel)));
}

/** Moves `rel` into `target` (made when missing), stamping the name when the target holds one already. Returns the new path. */
export async function moveInto(server: FolderServer, root: string, rel: string, target: string, now: () => number): Promise<string> {
  await server.ensureDir(remoteJoin(root, target));
  let name = path.posix.basename(rel);
  if (await server.exists(remoteJoin(root, relativeJoin(target, name)))) name = timestampedName(name, now());
  const destination = relativeJoin(target, name);
  await server.move(remoteJoin(root, rel), remoteJoin(root, destination));
  return destination;
}
