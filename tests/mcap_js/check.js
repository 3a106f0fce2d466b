// Reads an MCAP file with the MCAP project's own TypeScript library and prints what it found as one line of
// JSON, or writes a file with that library's writer and prints the same JSON for it. Used by
// tests/unit/mcap/mcap_js_test.cpp, which builds the JSON it expects from what axon wrote or read.
//
//   node check.js read FILE     # summary present: McapIndexedReader; otherwise McapStreamReader
//   node check.js write FILE    # McapWriter, zstd chunks, then read back as above
//   node check.js decode FILE TOPIC   # the topic's Protobuf messages decoded from the channel's schema
"use strict";

const fs = require("node:fs/promises");
const { McapIndexedReader, McapStreamReader, McapWriter } = require("@mcap/core");
const { FileHandleReadable, FileHandleWritable } = require("@mcap/nodejs");
const { loadDecompressHandlers, protobufFromBinaryDescriptor } = require("@mcap/support");
const { crc32 } = require("@foxglove/crc");
const zstd = require("@foxglove/wasm-zstd");

function describe({ summary, header, compressions, chunks, schemas, channels, messages, dataCrcOk }) {
  const counts = new Map();
  for (const m of messages) {
    counts.set(m.channelId, (counts.get(m.channelId) ?? 0) + 1);
  }
  const sorted = [...messages].sort((a, b) =>
    a.logTime !== b.logTime ? (a.logTime < b.logTime ? -1 : 1) : a.channelId - b.channelId || a.sequence - b.sequence,
  );
  return {
    summary,
    profile: header.profile,
    library: header.library,
    compression: [...new Set(compressions.map((c) => (c === "" ? "none" : c)))].sort(),
    chunks,
    data_crc_ok: dataCrcOk,
    schemas: [...schemas]
      .sort((a, b) => a.id - b.id)
      .map((s) => ({ id: s.id, name: s.name, encoding: s.encoding, size: s.data.length, crc: crc32(s.data) })),
    channels: [...channels]
      .sort((a, b) => a.id - b.id)
      .map((c) => ({
        id: c.id,
        topic: c.topic,
        schema: c.schemaId,
        encoding: c.messageEncoding,
        metadata: [...c.metadata.entries()],
      })),
    counts: [...counts.entries()].sort((a, b) => a[0] - b[0]),
    messages: sorted.map((m) => [
      m.channelId,
      m.sequence,
      m.logTime.toString(),
      m.publishTime.toString(),
      m.data.length,
      crc32(m.data),
    ]),
  };
}

async function readIndexed(path, handlers) {
  const handle = await fs.open(path, "r");
  try {
    const reader = await McapIndexedReader.Initialize({ readable: new FileHandleReadable(handle), decompressHandlers: handlers });
    const messages = [];
    for await (const message of reader.readMessages()) {
      messages.push(message);
    }
    // The data section CRC (DataEnd): the indexed reader keeps it but does not check it; check it here.
    let dataCrcOk = null;
    if (reader.dataSectionCrc !== undefined && reader.dataSectionCrc !== 0) {
      const bytes = await fs.readFile(path);
      dataCrcOk = crc32(bytes.subarray(0, Number(reader.dataEndOffset))) === reader.dataSectionCrc;
    }
    return describe({
      summary: true,
      header: reader.header,
      compressions: reader.chunkIndexes.map((c) => c.compression),
      chunks: reader.chunkIndexes.length,
      schemas: reader.schemasById.values(),
      channels: reader.channelsById.values(),
      messages,
      dataCrcOk,
    });
  } finally {
    await handle.close();
  }
}

async function readStream(path, handlers) {
  const reader = new McapStreamReader({ includeChunks: true, decompressHandlers: handlers, validateCrcs: true });
  const file = await fs.readFile(path);
  reader.append(file);
  let dataCrcOk = null;
  let header;
  const compressions = [];
  const schemas = new Map();
  const channels = new Map();
  const messages = [];
  let record;
  while ((record = reader.nextRecord()) !== undefined) {
    switch (record.type) {
      case "Header":
        header = record;
        break;
      case "Chunk":
        compressions.push(record.compression);
        break;
      case "Schema":
        schemas.set(record.id, record);
        break;
      case "Channel":
        channels.set(record.id, record);
        break;
      case "Message":
        messages.push(record);
        break;
      case "DataEnd":
        // Without a summary, DataEnd is the record before the footer (29 bytes) and the magic (8 bytes).
        if (record.dataSectionCrc !== 0) {
          dataCrcOk = crc32(file.subarray(0, file.length - 8 - 29 - 13)) === record.dataSectionCrc;
        }
        break;
      default:
        break;
    }
  }
  if (!reader.done()) {
    throw new Error(`${path}: the stream reader did not reach the end of the file`);
  }
  return describe({
    summary: false,
    header,
    compressions,
    chunks: compressions.length,
    schemas: schemas.values(),
    channels: channels.values(),
    messages,
    dataCrcOk,
  });
}

async function read(path) {
  const handlers = await loadDecompressHandlers();
  const handle = await fs.open(path, "r");
  const size = (await handle.stat()).size;
  const footer = Buffer.alloc(Math.min(size, 37));
  await handle.read(footer, 0, footer.length, size - footer.length);
  await handle.close();
  // Footer: opcode 0x02, length 20, summary_start (u64): non-zero when the file has a summary.
  const hasSummary = footer.length === 37 && footer[0] === 0x02 && footer.readBigUInt64LE(9) !== 0n;
  return hasSummary ? readIndexed(path, handlers) : readStream(path, handlers);
}

// Deterministic bytes: a linear congruential generator seeded per message.
function bytes(length, seed) {
  const out = new Uint8Array(length);
  let x = seed >>> 0;
  for (let i = 0; i < length; ++i) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

async function write(path) {
  await zstd.isLoaded;
  const handle = await fs.open(path, "w");
  const writer = new McapWriter({
    writable: new FileHandleWritable(handle),
    chunkSize: 8192,
    compressChunk: (data) => ({ compression: "zstd", compressedData: zstd.compress(data, 3) }),
  });
  await writer.start({ profile: "", library: "mcap-js reference writer" });
  const imu = await writer.registerSchema({ name: "demo.Imu", encoding: "protobuf", data: bytes(120, 7) });
  const frame = await writer.registerSchema({ name: "demo.Frame", encoding: "flatbuffer", data: bytes(64, 9) });
  const channels = [
    await writer.registerChannel({ schemaId: imu, topic: "/imu", messageEncoding: "protobuf", metadata: new Map([["qos", "reliable"]]) }),
    await writer.registerChannel({ schemaId: frame, topic: "/camera", messageEncoding: "flatbuffer", metadata: new Map() }),
    await writer.registerChannel({ schemaId: 0, topic: "/raw", messageEncoding: "axon.raw", metadata: new Map([["a", "1"], ["b", "2"]]) }),
  ];
  for (let i = 0; i < 300; ++i) {
    const channelId = channels[i % 3];
    const logTime = 1700000000000000000n + BigInt(i) * 1000000n;
    await writer.addMessage({ channelId, sequence: i, logTime, publishTime: logTime - 500n, data: bytes((i * 37) % 1500, i) });
  }
  await writer.addMetadata({ name: "run", metadata: new Map([["vehicle", "test"]]) });
  await writer.end();
  await handle.close();
  return read(path);
}

// The messages of `topic` decoded as a Protobuf viewer would: the channel's schema (a FileDescriptorSet) loaded
// with protobufjs (through @mcap/support), the schema's name looked up, each message decoded and turned into
// plain JSON (64-bit integers and enums as strings). Needs the file's summary (McapIndexedReader).
async function decode(path, topic) {
  const handlers = await loadDecompressHandlers();
  const handle = await fs.open(path, "r");
  try {
    const reader = await McapIndexedReader.Initialize({ readable: new FileHandleReadable(handle), decompressHandlers: handlers });
    const channel = [...reader.channelsById.values()].find((c) => c.topic === topic);
    if (channel === undefined) {
      throw new Error(`${path} has no channel of topic '${topic}'`);
    }
    const schema = reader.schemasById.get(channel.schemaId);
    if (schema === undefined || schema.encoding !== "protobuf" || channel.messageEncoding !== "protobuf") {
      throw new Error(`channel '${topic}' is not a Protobuf channel with a schema`);
    }
    const type = protobufFromBinaryDescriptor(schema.data).lookupType(schema.name);
    const messages = [];
    for await (const message of reader.readMessages({ topics: [topic] })) {
      messages.push(type.toObject(type.decode(message.data), { longs: String, enums: String, defaults: true }));
    }
    return { topic, schema: schema.name, messages };
  } finally {
    await handle.close();
  }
}

async function main() {
  const [mode, path, topic] = process.argv.slice(2);
  const known = mode === "read" || mode === "write" || (mode === "decode" && topic !== undefined);
  if (!known || path === undefined) {
    console.error("usage: node check.js read|write FILE, or node check.js decode FILE TOPIC");
    process.exit(2);
  }
  const result = mode === "read" ? await read(path) : mode === "write" ? await write(path) : await decode(path, topic);
  process.stdout.write(JSON.stringify(result) + "\n");
}

main().catch((error) => {
  console.error(`check.js: ${error.stack ?? error}`);
  process.exit(1);
});
