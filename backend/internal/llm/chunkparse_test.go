package llm

import (
	"encoding/json"
	"fmt"
	"mime"
	"reflect"
	"strings"
	"testing"
)

// providerChunks are chunks and completions in the shapes providers send
// them: the parser must read each itself, not leave it to encoding/json.
var providerChunks = []string{
	// OpenAI: the role chunk, text, the finish, usage in a chunk of its own.
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"xQ3"}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini","choices":[{"index":0,"delta":{"content":"Hel"},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":8,"total_tokens":128,"prompt_tokens_details":{"cached_tokens":64,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":3,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`,
	// OpenAI: parallel tool calls, their arguments streamed in pieces.
	`{"id":"chatcmpl-2","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"read_file","arguments":""}}]},"finish_reason":null}]}`,
	`{"id":"chatcmpl-2","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]},"finish_reason":null}]}`,
	`{"id":"chatcmpl-2","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a\\\\b\\n\\u00e9.txt\"}"}}]},"finish_reason":null}]}`,
	`{"id":"chatcmpl-2","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_def","type":"function","function":{"name":"list_dir","arguments":"{}"}}]},"finish_reason":null}]}`,
	`{"id":"chatcmpl-2","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	// A refusal, and a stream that ends in an error.
	`{"id":"chatcmpl-3","choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":null}]}`,
	`{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`,
	`{"error":"model is overloaded"}`,
	`{"choices":[],"error":null}`,
	// DeepSeek: reasoning_content, cache hits at the top of usage.
	`{"id":"x","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"Think"},"logprobs":null,"finish_reason":null}]}`,
	`{"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":"","reasoning_content":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70,"prompt_cache_hit_tokens":32,"prompt_cache_miss_tokens":18,"completion_tokens_details":{"reasoning_tokens":12}}}`,
	// Ollama and OpenRouter: reasoning.
	`{"id":"chatcmpl-9","object":"chat.completion.chunk","model":"qwen3","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Let me see"},"finish_reason":null}]}`,
	`{"id":"gen-1","provider":"OpenAI","model":"openai/o3","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"**Plan**\n","reasoning_details":[{"type":"reasoning.text","text":"**Plan**\n","format":"unknown","index":0}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}`,
	// Mistral: content as typed parts with thinking, cached tokens its way.
	`{"id":"m1","object":"chat.completion.chunk","created":1,"model":"magistral-medium-latest","choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"Hmm."}]}]},"finish_reason":null}]}`,
	`{"id":"m1","model":"magistral-medium-latest","choices":[{"index":0,"delta":{"content":[{"type":"text","text":"Answer"}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"total_tokens":15,"completion_tokens":5,"num_cached_tokens":4}}`,
	// Moonshot/Kimi: usage inside the last choice, cached tokens at the top.
	`{"id":"k1","object":"chat.completion.chunk","created":1,"model":"kimi-k2","choices":[{"index":0,"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":19,"completion_tokens":13,"total_tokens":32,"cached_tokens":8}}]}`,
	// Claude's compatibility layer and Gemini's: tool calls with no index.
	`{"id":"msg_1","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]},"finish_reason":null}],"created":1,"model":"claude-sonnet-4-5","object":"chat.completion.chunk"}`,
	`{"choices":[{"delta":{"role":"assistant","tool_calls":[{"function":{"arguments":{"city":"Paris"},"name":"get_weather"},"id":"","type":"function"}]},"finish_reason":"tool_calls","index":0}],"created":1,"id":"g1","model":"gemini-2.5-flash","object":"chat.completion.chunk","usage":{"completion_tokens":7,"prompt_tokens":40,"total_tokens":47}}`,
	// vLLM: input and output tokens under other names.
	`{"id":"v1","choices":[{"index":0,"delta":{"content":"x"},"logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":{"input_tokens":5,"output_tokens":1}}`,
	// Text in every script, raw and escaped, with emoji as surrogate pairs.
	`{"choices":[{"index":0,"delta":{"content":"héllo wörld — 日本語 🙂"},"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{"content":"h\u00e9llo \u65e5\u672c \ud83d\ude42 \"q\" \\ \/ \b\f\n\r\t"},"finish_reason":null}]}`,
	`{"id":"caf\u00e9","model":"\ud83d\ude42","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"st\u006fp"}]}`,
	// Lone surrogates and bytes that are not UTF-8 read as U+FFFD.
	`{"choices":[{"index":0,"delta":{"content":"a\ud83d b \ude42 c \ud83d\u0041"},"finish_reason":"\udc00\ud800"}]}`,
	"{\"id\":\"a\xffb\xc3\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xe2\x82\"},\"finish_reason\":null}]}",
	// A whole completion, with white space.
	"{\n  \"id\": \"chatcmpl-4\",\n  \"object\": \"chat.completion\",\n  \"model\": \"gpt-4.1\",\n  \"choices\": [\n    {\n      \"index\": 0,\n      \"message\": {\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{\"id\": \"call_1\", \"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": \"{}\"}}]},\n      \"finish_reason\": \"tool_calls\"\n    }\n  ],\n  \"usage\": {\"prompt_tokens\": 9, \"completion_tokens\": 3, \"total_tokens\": 12}\n}\n",
	// Nulls where values usually are, numbers of every form where none is read.
	`{"id":null,"model":null,"choices":[{"index":null,"delta":{"content":null,"tool_calls":[{"index":null,"id":null,"function":null}]},"message":null,"finish_reason":null,"usage":null}],"usage":{"prompt_tokens":null,"prompt_tokens_details":null,"completion_tokens_details":null},"error":null}`,
	`{"choices":null,"created":-1.5e+10,"x":[0,-0,1.25,1E3,true,false,null,{},[],{"a":{"b":[{}]}}],"y":"\u0000"}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":null}},{"index":1,"delta":{"tool_calls":[]}}],"usage":{"prompt_tokens":-3,"completion_tokens":123456789012345678}}`,
	`{}`,
}

// odd are texts the parser leaves to encoding/json: keys in another
// case, repeated keys, values of other types, numbers that are not plain
// integers, nesting past the limit, text that is not JSON.
var oddChunks = []string{
	`{"ID":"x","Choices":[{"Index":0,"Delta":{"Content":"hi"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"},"DELTA":{"content":"b"}}]}`,
	`{"id":"a","id":"b"}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"choices":[{"delta":{"reasoning":"b"}}]}`,
	`{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"a"},"function":{"arguments":"{}"}}]}}]}`,
	`{"\u0069d":"escaped key"}`,
	`{"ſ":"a key that folds"}`,
	`{"choices":[{"index":1.0}]}`,
	`{"choices":[{"index":1e2}]}`,
	`{"choices":[{"index":"0"}]}`,
	`{"usage":{"prompt_tokens":12345678901234567890}}`,
	`{"usage":{"prompt_tokens":1234567890123456789}}`,
	`{"usage":{"prompt_tokens":true}}`,
	`{"choices":{}}`,
	`{"choices":[null]}`,
	`{"choices":[1]}`,
	`{"choices":[{"delta":[]}]}`,
	`{"choices":[{"finish_reason":1}]}`,
	`{"id":1}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":-1,"function":"f"}]}}]}`,
	`null`,
	`[]`,
	`"text"`,
	``,
	`   `,
	`{`,
	`{"id":"x"`,
	`{"id":"x",}`,
	`{"id":"x"} {}`,
	`{"id":"x"}]`,
	`{"id" "x"}`,
	`{id:"x"}`,
	`{"x":[1,]}`,
	`{"x":01}`,
	`{"x":-}`,
	`{"x":1.}`,
	`{"x":1e}`,
	`{"x":.5}`,
	`{"x":tru}`,
	`{"x":nul}`,
	`{"x":nullx}`,
	`{"id":"tab	inside"}`,
	`{"id":"bad \x escape"}`,
	`{"id":"bad \u12 escape"}`,
	`{"id":"\'"}`,
	`{"error":{"message":"unterminated}`,
	`{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
	`{"x":` + strings.Repeat("[", 98) + strings.Repeat("]", 98) + `}`,
	`{"x":` + strings.Repeat(`{"a":`, 99) + `1` + strings.Repeat("}", 99) + `}`,
}

// sameAsEncodingJSON checks that parser.decodeAnswer reads data as
// encoding/json does, and says whether the parser read it itself.
func sameAsEncodingJSON(t *testing.T, data []byte) (parsed bool) {
	t.Helper()
	var want, got wireChunk
	wantErr := decodeAnswerReflect(data, &want)
	var parser chunkParser
	var fast wireChunk
	parsed = parser.chunk(data, &fast)
	gotErr := parser.decodeAnswer(data, &got)
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("%q: error %v, encoding/json's %v", data, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\nread       %s\nencoding/json %s", data, dump(got), dump(want))
	}
	return parsed
}

func TestChunkParserReadsAsEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, c := range providerChunks {
		if !sameAsEncodingJSON(t, []byte(c)) {
			t.Errorf("%q: left to encoding/json", c)
		}
	}
	for _, c := range oddChunks {
		sameAsEncodingJSON(t, []byte(c))
	}
	// One parser for all, as for the chunks of a stream: what it keeps
	// from one chunk never shows in the next.
	var parser chunkParser
	for _, c := range append(append([]string{}, providerChunks...), oddChunks...) {
		var want, got wireChunk
		wantErr := decodeAnswerReflect([]byte(c), &want)
		gotErr := parser.decodeAnswer([]byte(c), &got)
		if (gotErr == nil) != (wantErr == nil) || (wantErr == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("%q after the others:\nread          %s, %v\nencoding/json %s, %v", c, dump(got), gotErr, dump(want), wantErr)
		}
	}
}

// A chunk of text costs no allocation: each stream keeps its id and model
// once, not once a chunk, and reuses its choices and deltas. Not parallel:
// testing.AllocsPerRun counts the whole process.
func TestChunkParserReadsTextWithoutAllocating(t *testing.T) {
	var parser chunkParser
	chunk := []byte(providerChunks[1])
	var first wireChunk
	if err := parser.decodeAnswer(chunk, &first); err != nil {
		t.Fatal(err)
	}
	var c wireChunk
	allocs := testing.AllocsPerRun(10, func() {
		c = wireChunk{}
		if err := parser.decodeAnswer(chunk, &c); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations a chunk of text, want none", allocs)
	}
}

func FuzzChunkParser(f *testing.F) {
	for _, c := range providerChunks {
		f.Add([]byte(c))
	}
	for _, c := range oddChunks {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsEncodingJSON(t, data)
	})
}

// dump shows a chunk with its pointers followed.
func dump(c wireChunk) string {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Sprintf("%+v", c)
	}
	return string(b)
}

// BenchmarkDecodeChunk reads the provider chunks by the parser and by
// encoding/json.
func BenchmarkDecodeChunk(b *testing.B) {
	chunks := make([][]byte, len(providerChunks))
	for i, c := range providerChunks {
		chunks[i] = []byte(c)
	}
	b.Run("parser", func(b *testing.B) {
		b.ReportAllocs()
		var parser chunkParser
		var c wireChunk
		for b.Loop() {
			for _, data := range chunks {
				c = wireChunk{}
				if err := parser.decodeAnswer(data, &c); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		var c wireChunk
		for b.Loop() {
			for _, data := range chunks {
				c = wireChunk{}
				if err := decodeAnswerReflect(data, &c); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// jsonString reads a string as encoding/json does.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{`""`, `"Done."`, `"h\u00e9 \ud83d\ude42 \ud83d"`, "\"a\xffb\"", `"a" `, `"a"b"`, `"\q"`, `"`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, gotOK := jsonString(raw)
		var want string
		wantOK := len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &want) == nil
		if got != want || gotOK != wantOK {
			t.Fatalf("%q: %q, %v; encoding/json %q, %v", raw, got, gotOK, want, wantOK)
		}
	})
}

// isJSON reads a Content-Type as mime.ParseMediaType does.
func TestIsJSON(t *testing.T) {
	t.Parallel()
	for _, ct := range []string{
		"application/json", " Application/JSON ", "application/jſon", "APPLICATION/JSON\t",
		"text/event-stream", "", "application/json; charset=utf-8", "application/json;",
		"application/json; charset", "application/json ;x=1", "application/jsonx", "application /json",
	} {
		mediaType, _, err := mime.ParseMediaType(ct)
		if want := err == nil && mediaType == "application/json"; isJSON(ct) != want {
			t.Errorf("isJSON(%q) = %v, want %v", ct, !want, want)
		}
	}
}
