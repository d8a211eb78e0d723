"""The receiver's protobuf walk gives what ``MessageToDict`` gives, ids in hex (OTLP JSON), on every OTLP trace field."""

from __future__ import annotations

import base64
import json

from google.protobuf.json_format import MessageToDict, ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from evalkit.spans.online.intake import decode_request
from evalkit.spans.reading.otlp_protobuf import message_dict


def _value(**kind) -> dict:
    return kind


RICH = {
    "resourceSpans": [
        {
            "resource": {
                "attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}],
                "droppedAttributesCount": 2,
            },
            "schemaUrl": "https://opentelemetry.io/schemas/1.21.0",
            "scopeSpans": [
                {
                    "scope": {
                        "name": "lib",
                        "version": "1.0",
                        "attributes": [{"key": "a", "value": {"boolValue": False}}],
                    },
                    "spans": [
                        {
                            "traceId": "AAECAwQFBgcICQoLDA0ODw==",
                            "spanId": "AAECAwQFBgc=",
                            "parentSpanId": "BwYFBAMCAQA=",
                            "traceState": "k=v",
                            "flags": 257,
                            "name": "invoke_agent",
                            "kind": "SPAN_KIND_CLIENT",
                            "startTimeUnixNano": "1700000000000000000",
                            "endTimeUnixNano": "18446744073709551615",
                            "attributes": [
                                {"key": "s", "value": {"stringValue": ""}},
                                {"key": "b", "value": {"boolValue": True}},
                                {"key": "i", "value": {"intValue": "-9223372036854775808"}},
                                {"key": "d", "value": {"doubleValue": 0.1}},
                                {"key": "nan", "value": {"doubleValue": "NaN"}},
                                {"key": "inf", "value": {"doubleValue": "-Infinity"}},
                                {"key": "bytes", "value": {"bytesValue": "AP8="}},
                                {"key": "empty", "value": {}},
                                {"key": "zero", "value": {"intValue": "0"}},
                                {"key": "no value"},
                                {
                                    "key": "arr",
                                    "value": {
                                        "arrayValue": {
                                            "values": [
                                                {"intValue": "1"},
                                                {"arrayValue": {}},
                                                {"stringValue": "x"},
                                            ]
                                        }
                                    },
                                },
                                {
                                    "key": "kv",
                                    "value": {
                                        "kvlistValue": {
                                            "values": [{"key": "n", "value": {"doubleValue": 0.0}}]
                                        }
                                    },
                                },
                            ],
                            "droppedAttributesCount": 1,
                            "events": [
                                {
                                    "timeUnixNano": "1700000000000000001",
                                    "name": "gen_ai.choice",
                                    "attributes": [{"key": "e", "value": {"stringValue": "é 🙂"}}],
                                    "droppedAttributesCount": 3,
                                }
                            ],
                            "droppedEventsCount": 4,
                            "links": [
                                {
                                    "traceId": "AAECAwQFBgcICQoLDA0ODw==",
                                    "spanId": "AAECAwQFBgc=",
                                    "traceState": "t",
                                    "attributes": [],
                                    "flags": 1,
                                }
                            ],
                            "droppedLinksCount": 5,
                            "status": {"message": "boom", "code": "STATUS_CODE_ERROR"},
                        },
                        {
                            "traceId": "AAECAwQFBgcICQoLDA0ODw==",
                            "spanId": "AQECAwQFBgc=",
                            "kind": 42,
                            "attributes": [{"value": {"stringValue": "a value without a key"}}],
                        },
                        {},
                    ],
                }
            ],
        },
        {},
    ]
}


def _hex_ids(value):
    """``MessageToDict``'s output with span and link ids turned from base64 into hex, as OTLP JSON writes them."""
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: _hex_ids(v) for k, v in value.items()}
    if "spanId" in out:  # a span or a link
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in out:
                out[key] = base64.b64decode(out[key]).hex()
    return out


def test_the_walk_equals_message_to_dict_with_hex_ids_on_every_field():
    message = ParseDict(RICH, ExportTraceServiceRequest())
    expected = _hex_ids(MessageToDict(message, preserving_proto_field_name=False))
    assert message_dict(message) == expected
    assert repr(message_dict(message)) == repr(expected)  # same types too (str vs int, float vs str)
    span = message_dict(message)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert (span["traceId"], span["spanId"]) == ("000102030405060708090a0b0c0d0e0f", "0001020304050607")
    assert span["attributes"][6] == {"key": "bytes", "value": {"bytesValue": "AP8="}}  # other bytes: base64
    assert expected["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["kind"] == 42  # an unknown enum value
    assert message_dict(ExportTraceServiceRequest()) == {}


def test_protobuf_and_json_requests_give_the_same_span_documents():
    body = ParseDict(RICH, ExportTraceServiceRequest()).SerializeToString()
    from_protobuf = decode_request(body, "application/x-protobuf", "")
    from_json = decode_request(
        json.dumps(MessageToDict(ParseDict(RICH, ExportTraceServiceRequest()))).encode(),
        "application/json",
        "",
    )
    assert repr(from_protobuf) == repr(from_json)  # repr: NaN is not equal to itself
    assert from_protobuf[0][0]["traceId"] == "000102030405060708090a0b0c0d0e0f"
