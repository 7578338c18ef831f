package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
)

// Policy says which addresses an endpoint may have. By default only
// public ones: a webhook is a request the server makes on a client's
// behalf, and must not be a way to reach the services beside it.
type Policy struct {
	// AllowPrivate allows every address (loopback, private, link-local).
	AllowPrivate bool
	// Allow lists ranges allowed although not public.
	Allow []netip.Prefix
}

// special are ranges that are not public besides those netip names
// (loopback, private, link-local, multicast, unspecified).
var special = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),     // "this network"
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),   // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),  // NAT64: an IPv4 address inside
	netip.MustParsePrefix("64:ff9b:1::/48"),
}

// refused says why addr may not be dialled, as the kind of address with
// its article ("a loopback"), "" when it may.
func (p Policy) refused(addr netip.Addr) string {
	addr = addr.Unmap()
	if p.AllowPrivate {
		return ""
	}
	for _, pr := range p.Allow {
		if pr.Contains(addr) {
			return ""
		}
	}
	switch {
	case addr.IsLoopback():
		return "a loopback"
	case addr.IsPrivate():
		return "a private"
	case addr.IsLinkLocalUnicast(), addr.IsLinkLocalMulticast():
		return "a link-local"
	case addr.IsUnspecified():
		return "an unspecified"
	case addr.IsMulticast(), addr.IsInterfaceLocalMulticast():
		return "a multicast"
	}
	for _, pr := range special {
		if pr.Contains(addr) {
			return "a reserved"
		}
	}
	return ""
}

// consent is the advice an error of a refused address ends with.
const consent = "the server's operator may allow such targets in the config file (webhooks.allow_private, or webhooks.allow_cidrs)"

// resolveTimeout bounds the lookup of an endpoint's name at registration.
const resolveTimeout = 5 * time.Second

// CheckURL refuses, as errs.Invalid with a message that says why, a URL
// that is not http(s) with a host, that carries credentials, or whose
// host is or resolves to an address p refuses. It returns the URL as it
// will be used.
func (p Policy) CheckURL(ctx context.Context, raw string) (string, error) {
	bad := func(format string, args ...any) error {
		return errs.Invalid(errs.CodeInvalidArgument, "url: "+format, args...)
	}
	if strings.TrimSpace(raw) == "" {
		return "", bad("is required: the http or https URL to POST events to")
	}
	if len(raw) > 2048 {
		return "", bad("is longer than 2048 bytes")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", bad("is not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", bad("must be an http or https URL, not %q", u.Scheme+":")
	}
	if u.Host == "" || u.Hostname() == "" {
		return "", bad("has no host")
	}
	if u.User != nil {
		return "", bad("must not hold credentials (user:password@): the server signs each request with the webhook's secret instead")
	}
	if u.Fragment != "" {
		return "", bad("must not have a fragment (#…)")
	}
	host := u.Hostname()
	if addr, err := netip.ParseAddr(host); err == nil {
		if why := p.refused(addr); why != "" {
			return "", bad("%s is %s address, which webhooks may not reach: %s", host, why, consent)
		}
		return u.String(), nil
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return "", bad("host %s does not resolve", host)
	}
	for _, addr := range addrs {
		if why := p.refused(addr); why != "" {
			return "", bad("host %s resolves to %s, %s address, which webhooks may not reach: %s", host, addr.Unmap(), why, consent)
		}
	}
	return u.String(), nil
}

// errRefusedAddress is a connection refused by the Policy at dial time.
var errRefusedAddress = errors.New("address refused")

// transport returns an HTTP transport whose connections are checked
// against p as they are made, address by address after the name is
// resolved, so a name that resolves to a refused address (DNS rebinding
// included) is never connected to. It uses no proxy: a proxy's address
// would be checked instead of the endpoint's.
func (p Policy) transport(timeout time.Duration) *http.Transport {
	dialer := &net.Dialer{
		Timeout: timeout,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %s", errRefusedAddress, address)
			}
			if why := p.refused(ap.Addr()); why != "" {
				return fmt.Errorf("%w: %s is %s address (%s)", errRefusedAddress, ap.Addr().Unmap(), why, consent)
			}
			return nil
		},
	}
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
}
