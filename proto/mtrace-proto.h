/*
 * mtrace-proto.h - the constants of the client protocol (proto/mtrace.proto) both
 * ends must agree on: mtraced (daemon/stream*.c) and the client library
 * (client/lib/mtrace-client.c).  Frames are protobuf "delimited": a varint length, then
 * the message (common/frame.h).
 */
#ifndef MTRACE_PROTO_H
#define MTRACE_PROTO_H

/* Hello.version: a client and mtraced speak only the same version. */
#define MTRACE_PROTOCOL_VERSION 1

/* Largest message each way, prefix excluded: requests are small, event batches and
 * statistics are what the daemon sends (daemon/stream-columns.c sizes its batches so). */
#define FRAME_MAX_TO_DAEMON (64u * 1024)
#define FRAME_MAX_TO_CLIENT (4u * 1024 * 1024)
/* A varint length prefix takes at most this many bytes. */
#define FRAME_VARINT_MAX 10

#endif
