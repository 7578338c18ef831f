package llm

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agents-os/agents/backend/internal/jsoncheck"
)

// chunkParser reads a chunk or a completion into a wireChunk in one pass,
// without reflection: a stream is a few chunks for every piece of output,
// and encoding/json's Unmarshal cost more than the rest of reading them.
//
// It reads only what it knows encoding/json reads the same way: keys as
// wireChunk's tags spell them, each at most once in its object, values of
// the fields' own types, plain integers, strings with or without escapes.
// On anything else (a key in another case or with escapes, a repeated
// key, a value of another type, a number with a fraction or an exponent,
// nesting past jsoncheck.MaxDepth, text that is not JSON) it gives up, and
// decodeAnswer leaves the text to encoding/json, whose result and error
// are then exactly what they always were.
//
// The raw fields of what it reads (Content, Arguments, Error, …) are
// slices of the text read: they stay valid as long as it does. Its
// choices and their deltas are the parser's own, kept for the next chunk:
// they stay valid until the parser reads another.
type chunkParser struct {
	data  []byte
	pos   int
	depth int
	// seen are the last strings read, given out again when the same bytes
	// come back: each chunk of a stream repeats its id and model.
	seen [4]string
	next int
	// choiceRoom and deltaRoom hold the last chunk's choices and deltas,
	// their room reused for the next.
	choiceRoom []wireChoice
	deltaRoom  []wireDelta
}

// decodeAnswer decodes a chunk or a completion, refusing one nested past
// jsoncheck.MaxDepth before a decoder recurses into it.
func (p *chunkParser) decodeAnswer(data []byte, c *wireChunk) error {
	if p.chunk(data, c) {
		return nil
	}
	*c = wireChunk{}
	return decodeAnswerReflect(data, c)
}

// decodeAnswerReflect is decodeAnswer by encoding/json.
func decodeAnswerReflect(data []byte, c *wireChunk) error {
	if err := jsoncheck.Depth(data, jsoncheck.MaxDepth); err != nil {
		return err
	}
	return json.Unmarshal(data, c)
}

// The field names of each object, for unknownField.
var (
	chunkFields    = []string{"id", "model", "choices", "usage", "error"}
	choiceFields   = []string{"index", "delta", "message", "finish_reason", "usage"}
	deltaFields    = []string{"content", "reasoning_content", "reasoning", "tool_calls"}
	toolCallFields = []string{"index", "id", "function"}
	functionFields = []string{"name", "arguments"}
	usageFields    = []string{
		"prompt_tokens", "completion_tokens", "input_tokens", "output_tokens",
		"cached_tokens", "prompt_cache_hit_tokens", "num_cached_tokens", "reasoning_tokens",
		"prompt_tokens_details", "completion_tokens_details",
	}
	cachedDetailsFields    = []string{"cached_tokens"}
	reasoningDetailsFields = []string{"reasoning_tokens"}
)

// fieldSet is the fields of one object read so far, by their place in its
// list of names.
type fieldSet uint32

// once marks field i as read, and says whether it was the first time.
func (s *fieldSet) once(i int) bool {
	bit := fieldSet(1) << i
	if *s&bit != 0 {
		return false
	}
	*s |= bit
	return true
}

func (p *chunkParser) chunk(data []byte, c *wireChunk) bool {
	p.data, p.pos, p.depth = data, 0, 0
	p.deltaRoom = p.deltaRoom[:0]
	p.space()
	if !p.enter('{') {
		return false
	}
	var seen fieldSet
	for first := true; ; first = false {
		key, end, ok := p.key(first)
		if !ok {
			return false
		}
		if end {
			break
		}
		switch string(key) {
		case "id":
			ok = seen.once(0) && p.str(&c.ID)
		case "model":
			ok = seen.once(1) && p.str(&c.Model)
		case "choices":
			ok = seen.once(2) && p.choices(&c.Choices)
		case "usage":
			ok = seen.once(3) && p.usage(&c.Usage)
		case "error":
			ok = seen.once(4) && p.raw(&c.Error)
		default:
			ok = p.unknownField(key, chunkFields)
		}
		if !ok {
			return false
		}
	}
	p.space()
	return p.pos == len(p.data)
}

func (p *chunkParser) choices(dst *[]wireChoice) bool {
	if p.null() {
		*dst = nil
		return true
	}
	if !p.enter('[') {
		return false
	}
	// An empty list is an empty slice, not nil, as encoding/json has it.
	out := p.choiceRoom[:0]
	if out == nil {
		out = make([]wireChoice, 0, 1)
	}
	for first := true; ; first = false {
		end, ok := p.element(first)
		if !ok {
			return false
		}
		if end {
			break
		}
		out = append(out, wireChoice{})
		if !p.choice(&out[len(out)-1]) {
			return false
		}
	}
	p.choiceRoom = out
	*dst = out
	return true
}

func (p *chunkParser) choice(c *wireChoice) bool {
	if !p.enter('{') {
		return false
	}
	var seen fieldSet
	for first := true; ; first = false {
		key, end, ok := p.key(first)
		if !ok {
			return false
		}
		if end {
			return true
		}
		switch string(key) {
		case "index":
			ok = seen.once(0) && p.integer(&c.Index)
		case "delta":
			ok = seen.once(1) && p.delta(&c.Delta)
		case "message":
			ok = seen.once(2) && p.delta(&c.Message)
		case "finish_reason":
			ok = seen.once(3) && p.strPointer(&c.FinishReason)
		case "usage":
			ok = seen.once(4) && p.usage(&c.Usage)
		default:
			ok = p.unknownField(key, choiceFields)
		}
		if !ok {
			return false
		}
	}
}

func (p *chunkParser) delta(dst **wireDelta) bool {
	if p.null() {
		*dst = nil
		return true
	}
	if !p.enter('{') {
		return false
	}
	// A delta read before the room grew keeps its place in the old room.
	p.deltaRoom = append(p.deltaRoom, wireDelta{})
	d := &p.deltaRoom[len(p.deltaRoom)-1]
	var seen fieldSet
	for first := true; ; first = false {
		key, end, ok := p.key(first)
		if !ok {
			return false
		}
		if end {
			break
		}
		switch string(key) {
		case "content":
			ok = seen.once(0) && p.raw(&d.Content)
		case "reasoning_content":
			ok = seen.once(1) && p.raw(&d.ReasoningContent)
		case "reasoning":
			ok = seen.once(2) && p.raw(&d.Reasoning)
		case "tool_calls":
			ok = seen.once(3) && p.toolCalls(&d.ToolCalls)
		default:
			ok = p.unknownField(key, deltaFields)
		}
		if !ok {
			return false
		}
	}
	*dst = d
	return true
}

func (p *chunkParser) toolCalls(dst *[]wireToolCallDelta) bool {
	if p.null() {
		*dst = nil
		return true
	}
	if !p.enter('[') {
		return false
	}
	out := []wireToolCallDelta{}
	for first := true; ; first = false {
		end, ok := p.element(first)
		if !ok {
			return false
		}
		if end {
			break
		}
		out = append(out, wireToolCallDelta{})
		if !p.toolCall(&out[len(out)-1]) {
			return false
		}
	}
	*dst = out
	return true
}

func (p *chunkParser) toolCall(tc *wireToolCallDelta) bool {
	if !p.enter('{') {
		return false
	}
	var seen fieldSet
	for first := true; ; first = false {
		key, end, ok := p.key(first)
		if !ok {
			return false
		}
		if end {
			return true
		}
		switch string(key) {
		case "index":
			ok = seen.once(0) && p.intPointer(&tc.Index)
		case "id":
			ok = seen.once(1) && p.str(&tc.ID)
		case "function":
			ok = seen.once(2) && p.function(tc)
		default:
			ok = p.unknownField(key, toolCallFields)
		}
		if !ok {
			return false
		}
	}
}

func (p *chunkParser) function(tc *wireToolCallDelta) bool {
	if p.null() {
		return true
	}
	if !p.enter('{') {
		return false
	}
	var seen fieldSet
	for first := true; ; first = false {
		key, end, ok := p.key(first)
		if !ok {
			return false
		}
		if end {
			return true
		}
		switch string(key) {
		case "name":
			ok = seen.once(0) && p.str(&tc.Function.Name)
		case "arguments":
			ok = seen.once(1) && p.raw(&tc.Function.Arguments)
		default:
			ok = p.unknownField(key, functionFields)
		}
		if !ok {
			return false
		}
	}
}

func (p *chunkParser) usage(dst **wireUsage) bool {
	if p.null() {
		*dst = nil
		return true
	}
	if !p.enter('{') {
		return false
	}
	u := &wireUsage{}
	var seen fieldSet
	for first := true; ; first = false {
		key, end, ok := p.key(first)
		if !ok {
			return false
		}
		if end {
			break
		}
		switch string(key) {
		case "prompt_tokens":
			ok = seen.once(0) && p.integer(&u.PromptTokens)
		case "completion_tokens":
			ok = seen.once(1) && p.integer(&u.CompletionTokens)
		case "input_tokens":
			ok = seen.once(2) && p.integer(&u.InputTokens)
		case "output_tokens":
			ok = seen.once(3) && p.integer(&u.OutputTokens)
		case "cached_tokens":
			ok = seen.once(4) && p.integer(&u.CachedTokens)
		case "prompt_cache_hit_tokens":
			ok = seen.once(5) && p.integer(&u.PromptCacheHitTokens)
		case "num_cached_tokens":
			ok = seen.once(6) && p.integer(&u.NumCachedTokens)
		case "reasoning_tokens":
			ok = seen.once(7) && p.integer(&u.ReasoningTokens)
		case "prompt_tokens_details":
			ok = seen.once(8) && p.cachedDetails(&u.PromptTokensDetails)
		case "completion_tokens_details":
			ok = seen.once(9) && p.reasoningDetails(&u.CompletionTokensDetails)
		default:
			ok = p.unknownField(key, usageFields)
		}
		if !ok {
			return false
		}
	}
	*dst = u
	return true
}

func (p *chunkParser) cachedDetails(dst **wireCachedDetails) bool {
	if p.null() {
		*dst = nil
		return true
	}
	d := &wireCachedDetails{}
	if !p.oneInteger("cached_tokens", cachedDetailsFields, &d.CachedTokens) {
		return false
	}
	*dst = d
	return true
}

func (p *chunkParser) reasoningDetails(dst **wireReasoningDetails) bool {
	if p.null() {
		*dst = nil
		return true
	}
	d := &wireReasoningDetails{}
	if !p.oneInteger("reasoning_tokens", reasoningDetailsFields, &d.ReasoningTokens) {
		return false
	}
	*dst = d
	return true
}

// oneInteger reads an object of which only the integer field name is
// read.
func (p *chunkParser) oneInteger(name string, names []string, dst *int) bool {
	if !p.enter('{') {
		return false
	}
	var seen fieldSet
	for first := true; ; first = false {
		key, end, ok := p.key(first)
		if !ok {
			return false
		}
		if end {
			return true
		}
		if string(key) == name {
			ok = seen.once(0) && p.integer(dst)
		} else {
			ok = p.unknownField(key, names)
		}
		if !ok {
			return false
		}
	}
}

// unknownField skips the value of a key that names no field: unless the
// key is a field's name in another case, which encoding/json would take
// for it.
func (p *chunkParser) unknownField(key []byte, names []string) bool {
	for _, name := range names {
		if equalFoldASCII(key, name) {
			return false
		}
	}
	return p.skip()
}

func equalFoldASCII(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// space skips JSON's white space.
func (p *chunkParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// enter reads the bracket open that begins a list or an object, one level
// deeper.
func (p *chunkParser) enter(open byte) bool {
	if p.pos >= len(p.data) || p.data[p.pos] != open {
		return false
	}
	p.pos++
	p.depth++
	return p.depth <= jsoncheck.MaxDepth
}

// key reads what follows the opening of an object (first) or one of its
// values: the next key and its colon, or the object's end. A key of a
// field must be plain: ASCII with no escapes.
func (p *chunkParser) key(first bool) (key []byte, end, ok bool) {
	p.space()
	if p.pos >= len(p.data) {
		return nil, false, false
	}
	switch c := p.data[p.pos]; {
	case c == '}':
		p.pos++
		p.depth--
		return nil, true, true
	case !first && c == ',':
		p.pos++
		p.space()
	case !first:
		return nil, false, false
	}
	start := p.pos + 1
	plain, ok := p.skipString()
	if !ok || !plain {
		return nil, false, false
	}
	key = p.data[start : p.pos-1]
	return key, false, p.colon()
}

// element reads what follows the opening of a list (first) or one of its
// values: up to the next value, or the list's end.
func (p *chunkParser) element(first bool) (end, ok bool) {
	p.space()
	if p.pos >= len(p.data) {
		return false, false
	}
	switch c := p.data[p.pos]; {
	case c == ']':
		p.pos++
		p.depth--
		return true, true
	case !first && c == ',':
		p.pos++
		p.space()
	case !first:
		return false, false
	}
	return false, p.pos < len(p.data)
}

// null reads a null, if that is what comes.
func (p *chunkParser) null() bool {
	if len(p.data)-p.pos >= 4 && string(p.data[p.pos:p.pos+4]) == "null" {
		p.pos += 4
		return true
	}
	return false
}

// str reads a string into dst; null leaves dst as it is.
func (p *chunkParser) str(dst *string) bool {
	if p.null() {
		return true
	}
	s, ok := p.stringValue()
	if ok {
		*dst = s
	}
	return ok
}

func (p *chunkParser) strPointer(dst **string) bool {
	if p.null() {
		*dst = nil
		return true
	}
	s, ok := p.stringValue()
	if ok {
		*dst = &s
	}
	return ok
}

func (p *chunkParser) stringValue() (string, bool) {
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return "", false
	}
	start := p.pos + 1
	plain, ok := p.skipString()
	if !ok {
		return "", false
	}
	text := p.data[start : p.pos-1]
	if !plain {
		if bytes.IndexByte(text, '\\') < 0 && utf8.Valid(text) {
			return string(text), true
		}
		return unquote(text), true
	}
	for _, s := range p.seen {
		if string(text) == s {
			return s, true
		}
	}
	s := string(text)
	p.seen[p.next] = s
	p.next = (p.next + 1) % len(p.seen)
	return s, true
}

// integer reads a number with neither fraction nor exponent into dst;
// null leaves dst as it is.
func (p *chunkParser) integer(dst *int) bool {
	if p.null() {
		return true
	}
	n, ok := p.integerValue()
	if ok {
		*dst = n
	}
	return ok
}

func (p *chunkParser) intPointer(dst **int) bool {
	if p.null() {
		*dst = nil
		return true
	}
	n, ok := p.integerValue()
	if ok {
		*dst = &n
	}
	return ok
}

// integerValue reads an integer of at most 18 digits, which no int64
// overflows; longer ones are left to encoding/json.
func (p *chunkParser) integerValue() (int, bool) {
	start := p.pos
	if !p.skipNumber() {
		return 0, false
	}
	digits := p.data[start:p.pos]
	negative := digits[0] == '-'
	if negative {
		digits = digits[1:]
	}
	if len(digits) > 18 {
		return 0, false
	}
	n := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = 10*n + int(c-'0')
	}
	if negative {
		n = -n
	}
	return n, true
}

// raw reads any value into dst as its text, null as "null".
func (p *chunkParser) raw(dst *json.RawMessage) bool {
	start := p.pos
	if !p.skip() {
		return false
	}
	*dst = p.data[start:p.pos:p.pos]
	return true
}

// skip reads a value of any kind, checking it is JSON.
func (p *chunkParser) skip() bool {
	if p.pos >= len(p.data) {
		return false
	}
	switch p.data[p.pos] {
	case '"':
		_, ok := p.skipString()
		return ok
	case '{':
		if !p.enter('{') {
			return false
		}
		for first := true; ; first = false {
			end, ok := p.anyKey(first)
			if !ok {
				return false
			}
			if end {
				return true
			}
			if !p.skip() {
				return false
			}
		}
	case '[':
		if !p.enter('[') {
			return false
		}
		for first := true; ; first = false {
			end, ok := p.element(first)
			if !ok {
				return false
			}
			if end {
				return true
			}
			if !p.skip() {
				return false
			}
		}
	case 't':
		return p.literal("true")
	case 'f':
		return p.literal("false")
	case 'n':
		return p.literal("null")
	}
	return p.skipNumber()
}

// anyKey is key for an object none of whose fields are read: its keys
// may be any strings.
func (p *chunkParser) anyKey(first bool) (end, ok bool) {
	p.space()
	if p.pos >= len(p.data) {
		return false, false
	}
	switch c := p.data[p.pos]; {
	case c == '}':
		p.pos++
		p.depth--
		return true, true
	case !first && c == ',':
		p.pos++
		p.space()
	case !first:
		return false, false
	}
	if _, ok := p.skipString(); !ok {
		return false, false
	}
	return false, p.colon()
}

// colon reads the colon after a key, and the space around it.
func (p *chunkParser) colon() bool {
	p.space()
	if p.pos >= len(p.data) || p.data[p.pos] != ':' {
		return false
	}
	p.pos++
	p.space()
	return p.pos < len(p.data)
}

func (p *chunkParser) literal(word string) bool {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return false
	}
	p.pos += len(word)
	return true
}

// skipNumber reads a number as JSON writes them:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *chunkParser) skipNumber() bool {
	d := p.data
	i := p.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		i = digitsEnd(d, i)
	default:
		return false
	}
	if i < len(d) && d[i] == '.' {
		if i+1 >= len(d) || !isDigit(d[i+1]) {
			return false
		}
		i = digitsEnd(d, i+1)
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return false
		}
		i = digitsEnd(d, i)
	}
	p.pos = i
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digitsEnd(d []byte, i int) int {
	for i < len(d) && isDigit(d[i]) {
		i++
	}
	return i
}

// skipString reads a string from its opening quote past its closing one,
// checking its escapes and that it holds no control character. plain says
// it has neither escapes nor bytes outside ASCII: its text is its value.
func (p *chunkParser) skipString() (plain, ok bool) {
	d := p.data
	if p.pos >= len(d) || d[p.pos] != '"' {
		return false, false
	}
	plain = true
	for i := p.pos + 1; i < len(d); i++ {
		for i < len(d) && plainStringByte[d[i]] {
			i++
		}
		if i >= len(d) {
			break
		}
		switch c := d[i]; {
		case c == '"':
			p.pos = i + 1
			return plain, true
		case c == '\\':
			plain = false
			i++
			if i >= len(d) {
				return false, false
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if hex4(d[i+1:]) < 0 {
					return false, false
				}
				i += 4
			default:
				return false, false
			}
		case c < 0x20:
			return false, false
		default: // not ASCII
			plain = false
		}
	}
	return false, false
}

// plainStringByte is true for the bytes a string holds as they are:
// ASCII, but for control characters, the quote and the backslash.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func hexValue(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// unquote is the value of a string's text that skipString checked, as
// encoding/json reads it: a byte that is not UTF-8, or a surrogate escape
// that is not half of a pair, reads as U+FFFD.
func unquote(text []byte) string {
	out := make([]byte, 0, len(text))
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\\':
			e := text[i+1]
			i += 2
			switch e {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(text[i:])
				i += 4
				if utf16.IsSurrogate(r) {
					// Half of a pair, whose other half must follow at once.
					low := rune(-1)
					if i+6 <= len(text) && text[i] == '\\' && text[i+1] == 'u' {
						low = hex4(text[i+2:])
					}
					r = utf16.DecodeRune(r, low)
					if r != utf8.RuneError {
						i += 6
					}
				}
				out = utf8.AppendRune(out, r)
			default: // '"', '\\', '/'
				out = append(out, e)
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(text[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, text[i:i+size]...)
			}
			i += size
		}
	}
	return string(out)
}

// hex4 is the rune four hex digits spell, or -1 when they are not four
// hex digits.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		v := hexValue(c)
		if v < 0 {
			return -1
		}
		r = r<<4 | v
	}
	return r
}
