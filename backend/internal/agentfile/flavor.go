package agentfile

import "strings"

// Flavor names the dialect of the model API an agent talks to; the model
// client uses it to adapt requests to the provider.
type Flavor string

// The flavors agent files may name, spelled as agents-exe spells them.
const (
	FlavorOpenAIv1  Flavor = "OpenAIv1"
	FlavorMistralV1 Flavor = "MistralV1"
	FlavorKimiV1    Flavor = "KimiV1"
	FlavorClaudeV1  Flavor = "ClaudeV1"
)

// Flavors lists the canonical flavor names, in the order error messages
// show them.
func Flavors() []Flavor {
	return []Flavor{FlavorOpenAIv1, FlavorMistralV1, FlavorKimiV1, FlavorClaudeV1}
}

// ParseFlavor accepts a canonical flavor name, or one of the other
// spellings agents-exe accepts (openai-v1, mistral-v1, kimiv1, claude-v1),
// and returns the canonical flavor.
func ParseFlavor(name string) (Flavor, bool) {
	switch name {
	case "OpenAIv1", "openai-v1":
		return FlavorOpenAIv1, true
	case "MistralV1", "mistral-v1":
		return FlavorMistralV1, true
	case "KimiV1", "kimiv1":
		return FlavorKimiV1, true
	case "ClaudeV1", "claude-v1":
		return FlavorClaudeV1, true
	}
	return "", false
}

func flavorList() string {
	names := make([]string, 0, 4)
	for _, f := range Flavors() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}
