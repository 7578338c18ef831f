package tokens

import "unicode/utf8"

// Estimate is a conservative count of the tokens of s under a byte-pair
// tokenizer: meant to be at or above the real count, never below it, for
// prose, code, JSON, command output and CJK text.
//
// A flat bytes/3 is not enough: BPE tokenizers split text into runs of one
// class (letters, digits, spaces, punctuation) before merging bytes, and
// text where classes alternate costs about a token a byte: a UUID is 36
// bytes and 36 tokens under o200k_base and cl100k_base, and a JSON tool
// result full of IDs and hashes measured 2.5 bytes a token. So Estimate
// follows the same split and bounds each run:
//
//   - letters: a token per 3 letters, a run broken at each lower-to-upper
//     case change (camelCase splits there under o200k_base);
//   - digits: a token per 3 digits, which is how both encodings split
//     numbers;
//   - punctuation: a token per 2 characters;
//   - whitespace: a single space before a word or punctuation joins it and
//     costs nothing; other runs cost a token per 8 bytes, at least one;
//   - other characters: a token per 2-byte character (accented Latin,
//     Cyrillic, Greek), 1.5 per 3-byte one (CJK: cl100k_base spends about
//     1.0 on average), 3 per 4-byte one (emoji: 2.3 under cl100k_base).
//
// Over the files of testdata it counts 1.2 to 2.1 times the tokens of
// o200k_base and cl100k_base; see BENCHMARKS.md, "Measuring a request".
func Estimate(s string) int {
	// halves counts half tokens, for the 3-byte characters.
	halves := 0
	for i := 0; i < len(s); {
		b := s[i]
		j := i + 1
		switch {
		case isLetter(b):
			for j < len(s) && isLetter(s[j]) && !(isUpper(s[j]) && isLower(s[j-1])) {
				j++
			}
			halves += 2 * ceilDiv(j-i, 3)
		case isDigit(b):
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			halves += 2 * ceilDiv(j-i, 3)
		case isSpace(b):
			for j < len(s) && isSpace(s[j]) {
				j++
			}
			n := j - i
			// The run's last space joins a word or punctuation after it.
			if s[j-1] == ' ' && j < len(s) && (isLetter(s[j]) || isPunct(s[j])) {
				n--
			}
			if n > 0 {
				halves += 2 * ceilDiv(n, 8)
			}
		case b < utf8.RuneSelf:
			for j < len(s) && isPunct(s[j]) {
				j++
			}
			halves += 2 * ceilDiv(j-i, 2)
		default:
			_, size := utf8.DecodeRuneInString(s[i:])
			j = i + size
			switch size {
			case 1, 2: // 1: a byte that is not UTF-8, a token of its own
				halves += 2
			case 3:
				halves += 3
			default:
				halves += 6
			}
		}
		i = j
	}
	return ceilDiv(halves, 2)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func isLower(b byte) bool  { return 'a' <= b && b <= 'z' }
func isUpper(b byte) bool  { return 'A' <= b && b <= 'Z' }
func isLetter(b byte) bool { return isLower(b) || isUpper(b) }
func isDigit(b byte) bool  { return '0' <= b && b <= '9' }
func isSpace(b byte) bool  { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// isPunct is every other ASCII byte: punctuation, symbols, control bytes.
func isPunct(b byte) bool {
	return b < utf8.RuneSelf && !isLetter(b) && !isDigit(b) && !isSpace(b)
}
