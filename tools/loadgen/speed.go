package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"slices"
	"time"
)

// Speed is how fast this machine is, just then, at two things a prompt is
// made of, as the load tool measures them on itself: CPU work and a round
// trip over loopback TCP. Machines of one kind differ by three times and
// one VM by two within minutes, so rows of two runs compare only as far as
// their speeds match.
type Speed struct {
	// JSON is the time to encode and decode a fixed document of 20 turns.
	JSON Duration `json:"json_ms"`
	// Loopback is one 100-byte round trip between two goroutines over a
	// loopback TCP connection.
	Loopback Duration `json:"loopback_ms"`
}

func (s Speed) String() string {
	return fmt.Sprintf("JSON %.0f µs, loopback round trip %.0f µs", time.Duration(s.JSON).Seconds()*1e6, time.Duration(s.Loopback).Seconds()*1e6)
}

// speedBatches and the sizes below keep a measurement to about 50 ms.
const (
	speedBatches   = 5
	jsonPerBatch   = 40
	echoesPerBatch = 200
)

// MeasureSpeed measures Speed: each figure is the median of a few
// batches, so a moment of contention does not make the machine look slow.
func MeasureSpeed() (Speed, error) {
	var s Speed
	j, err := medianOf(speedBatches, jsonPerBatch, jsonRound)
	if err != nil {
		return s, err
	}
	l, err := loopbackSpeed()
	if err != nil {
		return s, err
	}
	s.JSON, s.Loopback = Duration(j), Duration(l)
	return s, nil
}

type speedTurn struct {
	Index int    `json:"index"`
	Kind  string `json:"kind"`
	Text  string `json:"text"`
	Usage [2]int `json:"usage"`
}

var speedDoc = func() []speedTurn {
	doc := make([]speedTurn, 20)
	for i := range doc {
		doc[i] = speedTurn{Index: i, Kind: "user", Text: fmt.Sprintf("prompt number %d: say something about the weather", i), Usage: [2]int{40 + i, 2}}
	}
	return doc
}()

func jsonRound() error {
	b, err := json.Marshal(speedDoc)
	if err != nil {
		return err
	}
	var back []speedTurn
	return json.Unmarshal(b, &back)
}

// medianOf times batches of n calls of f and returns the median time of
// one call.
func medianOf(batches, n int, f func() error) (time.Duration, error) {
	times := make([]time.Duration, batches)
	for b := range times {
		begin := time.Now()
		for range n {
			if err := f(); err != nil {
				return 0, err
			}
		}
		times[b] = time.Since(begin) / time.Duration(n)
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

func loopbackSpeed() (time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(c, c)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return 0, err
	}
	defer c.Close()
	msg, back := make([]byte, 100), make([]byte, 100)
	return medianOf(speedBatches, echoesPerBatch, func() error {
		if _, err := c.Write(msg); err != nil {
			return err
		}
		_, err := io.ReadFull(c, back)
		return err
	})
}
