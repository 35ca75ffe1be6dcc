/**
 * A recorded session (the agent core on the offline model, `--approval ask`, permission allowed):
 * what the msw handlers replay by default. Re-record with
 * `node_modules/.bin/tsx scripts/record-sample-transcript.ts`; do not edit by hand.
 */
import type { ChimeraEvent } from '../../generated/schemas.gen.ts'

export const SAMPLE_SESSION_ID = "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001"

export const sampleTranscript: ChimeraEvent[] = [
  {
    "seq": 1,
    "id": "evt-00000000-0000-4000-8000-000000000001",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "user_message",
    "turn": 0,
    "ts": "2026-01-01T00:00:00.100Z",
    "data": {
      "message_id": "message-1",
      "text": "!think The user wants a greeting file.\n!say I will write <b>hello.txt</b> & check it.\n!call Write {\"path\":\"hello.txt\",\"content\":\"hello <world>\\n\"}"
    }
  },
  {
    "seq": 2,
    "id": "evt-00000000-0000-4000-8000-000000000002",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "turn_start",
    "turn": 0,
    "ts": "2026-01-01T00:00:00.200Z",
    "data": {
      "prompt": "!think The user wants a greeting file.\n!say I will write <b>hello.txt</b> & check it.\n!call Write {\"path\":\"hello.txt\",\"content\":\"hello <world>\\n\"}",
      "model": "offline"
    }
  },
  {
    "seq": 3,
    "id": "evt-00000000-0000-4000-8000-000000000003",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "step_start",
    "turn": 0,
    "ts": "2026-01-01T00:00:00.300Z",
    "data": {
      "step": 1
    }
  },
  {
    "seq": 4,
    "id": "evt-00000000-0000-4000-8000-000000000004",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "reasoning",
    "turn": 0,
    "ts": "2026-01-01T00:00:00.400Z",
    "data": {
      "text": "The",
      "step": 1
    }
  },
  {
    "seq": 5,
    "id": "evt-00000000-0000-4000-8000-000000000005",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "reasoning",
    "turn": 0,
    "ts": "2026-01-01T00:00:00.500Z",
    "data": {
      "text": " user wants a greeting file.",
      "step": 1
    }
  },
  {
    "seq": 6,
    "id": "evt-00000000-0000-4000-8000-000000000006",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "text_delta",
    "turn": 0,
    "ts": "2026-01-01T00:00:00.600Z",
    "data": {
      "text": "I",
      "step": 1
    }
  },
  {
    "seq": 7,
    "id": "evt-00000000-0000-4000-8000-000000000007",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "text_delta",
    "turn": 0,
    "ts": "2026-01-01T00:00:00.700Z",
    "data": {
      "text": " will write <b>hello.txt</b> & check it.",
      "step": 1
    }
  },
  {
    "seq": 8,
    "id": "evt-00000000-0000-4000-8000-000000000008",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "usage",
    "turn": 0,
    "ts": "2026-01-01T00:00:00.800Z",
    "data": {
      "usage": {
        "input_tokens": 37,
        "output_tokens": 32,
        "cache_tokens": 0,
        "total_tokens": 69,
        "cost_usd": 0
      },
      "context_window": 128000
    }
  },
  {
    "seq": 9,
    "id": "evt-00000000-0000-4000-8000-000000000009",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "tool_call",
    "turn": 0,
    "ts": "2026-01-01T00:00:00.900Z",
    "data": {
      "call_id": "call-1",
      "tool": "Write",
      "args": {
        "path": "hello.txt",
        "content": "hello <world>\n"
      },
      "step": 1,
      "old_text": null
    }
  },
  {
    "seq": 10,
    "id": "evt-00000000-0000-4000-8000-000000000010",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "permission_request",
    "turn": 0,
    "ts": "2026-01-01T00:00:01.000Z",
    "data": {
      "request_id": "request-1",
      "call_id": "call-1",
      "tool": "Write",
      "args": {
        "path": "hello.txt",
        "content": "hello <world>\n"
      },
      "risk": "medium",
      "options": [
        "allow",
        "always",
        "deny",
        "never"
      ],
      "old_text": null
    }
  },
  {
    "seq": 11,
    "id": "evt-00000000-0000-4000-8000-000000000011",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "permission_reply",
    "turn": 0,
    "ts": "2026-01-01T00:00:01.100Z",
    "data": {
      "request_id": "request-1",
      "decision": "allow",
      "source": "http"
    }
  },
  {
    "seq": 12,
    "id": "evt-00000000-0000-4000-8000-000000000012",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "tool_start",
    "turn": 0,
    "ts": "2026-01-01T00:00:01.200Z",
    "data": {
      "call_id": "call-1",
      "tool": "Write",
      "args": {
        "path": "hello.txt",
        "content": "hello <world>\n"
      }
    }
  },
  {
    "seq": 13,
    "id": "evt-00000000-0000-4000-8000-000000000013",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "file_edit",
    "turn": 0,
    "ts": "2026-01-01T00:00:01.300Z",
    "data": {
      "path": "hello.txt",
      "diff": "===================================================================\n--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1,1 @@\n+hello <world>\n"
    }
  },
  {
    "seq": 14,
    "id": "evt-00000000-0000-4000-8000-000000000014",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "tool_result",
    "turn": 0,
    "ts": "2026-01-01T00:00:01.400Z",
    "data": {
      "call_id": "call-1",
      "tool": "Write",
      "ok": true,
      "output": "Created hello.txt (14 bytes)",
      "data": {
        "path": "hello.txt",
        "bytes": 14,
        "created": true
      },
      "duration_ms": 3
    }
  },
  {
    "seq": 15,
    "id": "evt-00000000-0000-4000-8000-000000000015",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "step_end",
    "turn": 0,
    "ts": "2026-01-01T00:00:01.500Z",
    "data": {
      "step": 1,
      "stop_reason": "tool_use"
    }
  },
  {
    "seq": 16,
    "id": "evt-00000000-0000-4000-8000-000000000016",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "step_start",
    "turn": 0,
    "ts": "2026-01-01T00:00:01.600Z",
    "data": {
      "step": 2
    }
  },
  {
    "seq": 17,
    "id": "evt-00000000-0000-4000-8000-000000000017",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "text_delta",
    "turn": 0,
    "ts": "2026-01-01T00:00:01.700Z",
    "data": {
      "text": "Write",
      "step": 2
    }
  },
  {
    "seq": 18,
    "id": "evt-00000000-0000-4000-8000-000000000018",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "text_delta",
    "turn": 0,
    "ts": "2026-01-01T00:00:01.800Z",
    "data": {
      "text": " ok: Created hello.txt (14 bytes)",
      "step": 2
    }
  },
  {
    "seq": 19,
    "id": "evt-00000000-0000-4000-8000-000000000019",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "usage",
    "turn": 0,
    "ts": "2026-01-01T00:00:01.900Z",
    "data": {
      "usage": {
        "input_tokens": 73,
        "output_tokens": 10,
        "cache_tokens": 0,
        "total_tokens": 83,
        "cost_usd": 0
      },
      "context_window": 128000
    }
  },
  {
    "seq": 20,
    "id": "evt-00000000-0000-4000-8000-000000000020",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "step_end",
    "turn": 0,
    "ts": "2026-01-01T00:00:02.000Z",
    "data": {
      "step": 2,
      "stop_reason": "end_turn"
    }
  },
  {
    "seq": 21,
    "id": "evt-00000000-0000-4000-8000-000000000021",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "turn_end",
    "turn": 0,
    "ts": "2026-01-01T00:00:02.100Z",
    "data": {
      "stop_reason": "end_turn",
      "steps": 2
    }
  },
  {
    "seq": 22,
    "id": "evt-00000000-0000-4000-8000-000000000022",
    "session_id": "otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001",
    "type": "agent_result",
    "turn": 0,
    "ts": "2026-01-01T00:00:02.200Z",
    "data": {
      "success": true,
      "output": "Write ok: Created hello.txt (14 bytes)",
      "usage": {
        "input_tokens": 110,
        "output_tokens": 42,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "cache_tokens": 0,
        "reasoning_tokens": 0,
        "total_tokens": 152,
        "cost_usd": 0
      },
      "steps": 2
    }
  }
]
