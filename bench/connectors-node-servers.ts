/**
 * `bench:connectors -- --node-servers`: the Node test doubles (ssh2's SFTP
 * server, ftp-srv) serving the bench folder, in a process of their own so the
 * measured process carries none of their work. Prints the ports as one JSON
 * line and serves until stdin closes.
 */
import { TestFtpServer } from "../test/helpers/ftp-server.js";
import { TestSftpServer } from "../test/helpers/sftp-server.js";

const root = process.argv[2] ?? ".";
const user = JSON.parse(process.argv[3] ?? "{}") as { username: string; password: string; publicKey: string };
const sftp = await new TestSftpServer({ root, ...user }).start();
const ftp = await new TestFtpServer({ root, username: user.username, password: user.password }).start();
process.stdout.write(`${JSON.stringify({ sftp: sftp.port, ftp: ftp.port })}\n`);
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
