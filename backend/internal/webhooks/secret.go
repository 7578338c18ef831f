package webhooks

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agents-os/agents/backend/internal/errs"
)

// secretPrefix starts every secret, as Standard Webhooks writes them.
const secretPrefix = "whsec_"

// Secrets are 24 to 64 random bytes (the specification's bounds); the
// server makes them of 32.
const (
	minSecretBytes = 24
	maxSecretBytes = 64
	newSecretBytes = 32
)

// NewSecret returns a new random secret: whsec_ and the base64 of 32
// random bytes.
func NewSecret() string {
	b := make([]byte, newSecretBytes)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return secretPrefix + base64.StdEncoding.EncodeToString(b)
}

// checkSecret refuses a secret a client gave that is not whsec_ and the
// base64 of 24 to 64 bytes, without ever repeating it; it returns the
// secret with its prefix.
func checkSecret(s string) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, secretPrefix))
	if err != nil || len(key) < minSecretBytes || len(key) > maxSecretBytes {
		return "", errs.Invalid(errs.CodeInvalidArgument, "secret must be %s followed by the base64 of %d to %d random bytes (or absent: the server makes one)", secretPrefix, minSecretBytes, maxSecretBytes)
	}
	return secretPrefix + strings.TrimPrefix(s, secretPrefix), nil
}

// The headers of a signed request.
const (
	HeaderID        = standardwebhooks.HeaderWebhookID
	HeaderTimestamp = standardwebhooks.HeaderWebhookTimestamp
	HeaderSignature = standardwebhooks.HeaderWebhookSignature
)

// Sign sets the Standard Webhooks headers of a request with id sent at
// at with body, signed with secret.
func Sign(h http.Header, secret, id string, at time.Time, body []byte) error {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	sig, err := wh.Sign(id, at, body)
	if err != nil {
		return err
	}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return nil
}
