// Drives Narrator's OpenAI speech convention with the official openai npm
// client, unchanged: OPENAI_BASE_URL and OPENAI_API_KEY name the server and
// the key, argv[2] the folder the audio is written to. Prints a JSON
// report on stdout.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(path.join(process.env.OPENAI_NPM_DIR, "index.js"));
const OpenAI = require("openai").default ?? require("openai");
const { Stream } = require("openai/streaming");

const client = new OpenAI({ maxRetries: 0 });
const out = { files: {}, errors: {} };
for (const format of ["mp3", "wav", "pcm"]) {
  const res = await client.audio.speech.create({ model: "tts-1", voice: "en_US/Kevin", input: "The quick brown fox jumps over the lazy dog.", response_format: format });
  const file = path.join(process.argv[2], "speech." + format);
  fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  out.files[format] = file;
}
// stream_format sse, read with the client's own event decoder: the
// deltas' audio joined into a file, and when the first delta and the done
// event arrived (ms after the request).
{
  const input = process.env.SSE_INPUT;
  const start = performance.now();
  const res = await client.audio.speech.create({ model: "tts-1", voice: "en_US/Kevin", input, stream_format: "sse" });
  const chunks = [];
  const sse = { types: [] };
  for await (const e of Stream.fromSSEResponse(res, new AbortController())) {
    sse.types.push(e.type);
    if (e.type === "speech.audio.delta") {
      sse.firstDelta ??= performance.now() - start;
      chunks.push(Buffer.from(e.audio, "base64"));
    } else if (e.type === "speech.audio.done") {
      sse.done = performance.now() - start;
      sse.usage = e.usage;
    }
  }
  sse.file = path.join(process.argv[2], "events.mp3");
  fs.writeFileSync(sse.file, Buffer.concat(chunks));
  out.sse = sse;
}
out.voices = (await client.get("/audio/voices")).voices.length;
const bad = new OpenAI({ apiKey: "nk_not_a_key", maxRetries: 0 });
for (const [name, c, params] of [
  ["bad key", bad, { model: "tts-1", voice: "alloy", input: "Hello." }],
  ["unknown voice", client, { model: "tts-1", voice: "nobody", input: "Hello." }],
  ["too long", client, { model: "tts-1", voice: "alloy", input: "word ".repeat(1000) }],
  ["stream format", client, { model: "tts-1", voice: "alloy", input: "Hello.", stream_format: "websocket" }],
]) {
  try {
    await c.audio.speech.create(params);
    out.errors[name] = null;
  } catch (e) {
    out.errors[name] = { status: e.status, code: e.code, param: e.param, type: e.type };
  }
}
console.log(JSON.stringify(out));
