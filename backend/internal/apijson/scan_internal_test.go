package apijson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// A valid body is read by parseValid to the same value, or refused with
// the same error, as the decoder's parseValue reads it.
func TestParseValidReadsAsTheDecoderReads(t *testing.T) {
	t.Parallel()
	bodies := []string{
		`{}`,
		` { "text" : "hi" , "interrupt" : true } `,
		"{\n\t\"text\":\"\",\"session_id\":\"s\"\r\n}",
		`{"text":"a \"quoted\" word, a \\ and \/ and \n\t\u00e9\ud83d\ude00 \ud800"}`,
		`{"text":"tail backslash \\"}`,
		`{"text":"héllo, 世界"}`,
		`{"params":{"a":"1","b":"2"},"run":{"max_steps":3}}`,
		`{"params":{"a":null},"run":null,"interrupt":false}`,
		`{"attachments":[{"name":"a.txt"},{"name":"b","media_type":"text/plain"}],"text":"x"}`,
		`{"attachments":[],"text":"x"}`,
		`{"run":{"max_steps":-12.5e+3}}`,
		`{"run":{"max_steps":0}}`,
		`{"text":"a","text":"b"}`,
		`{"nope":1}`,
		`{"params":{"a":"1","a":"2"}}`,
		`{"attachments":[{"name":"a"},{"name":"b","nope":[1,2]}]}`,
		`{"attachments":[{"name":"a"},{"name":"b","name":"c"}]}`,
		`{"params":{"deep":{"deeper":[1,[2,{"x":true}]]}}}`,
		`[1,2,"three",null,{"k":[]}]`,
		`"just a string"`,
		`42`,
	}
	sh := shapeOf((&agentsv1.PostMessageRequest{}).ProtoReflect().Descriptor())
	for _, body := range bodies {
		t.Run(body, func(t *testing.T) {
			data := []byte(body)
			if !json.Valid(data) {
				t.Fatalf("not valid JSON: %s", body)
			}
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			want, wantErr := parseValue(dec, sh)
			got, gotErr := parseValid(data, sh)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("parseValid = %#v, want %#v", got, want)
			}
			if !reflect.DeepEqual(gotErr, wantErr) {
				t.Errorf("parseValid error = %v, want %v", gotErr, wantErr)
			}
		})
	}
}
