// Drives Narrator's OpenAI speech convention with the official openai npm
// client, unchanged: OPENAI_BASE_URL and OPENAI_API_KEY name the server and
// the key, argv[2] the folder the audio is written to. Prints a JSON
// report on stdout.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(path.join(process.env.OPENAI_NPM_DIR, "index.js"));
const OpenAI = require("openai").default ?? require("openai");

const client = new OpenAI({ maxRetries: 0 });
const out = { files: {}, errors: {} };
for (const format of ["mp3", "wav", "pcm"]) {
  const res = await client.audio.speech.create({ model: "tts-1", voice: "en_US/Kevin", input: "The quick brown fox jumps over the lazy dog.", response_format: format });
  const file = path.join(process.argv[2], "speech." + format);
  fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  out.files[format] = file;
}
out.voices = (await client.get("/audio/voices")).voices.length;
const bad = new OpenAI({ apiKey: "nk_not_a_key", maxRetries: 0 });
for (const [name, c, params] of [
  ["bad key", bad, { model: "tts-1", voice: "alloy", input: "Hello." }],
  ["unknown voice", client, { model: "tts-1", voice: "nobody", input: "Hello." }],
  ["too long", client, { model: "tts-1", voice: "alloy", input: "word ".repeat(1000) }],
]) {
  try {
    await c.audio.speech.create(params);
    out.errors[name] = null;
  } catch (e) {
    out.errors[name] = { status: e.status, code: e.code, param: e.param, type: e.type };
  }
}
console.log(JSON.stringify(out));
