package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// The fan-out floor: what it costs this machine, with no server at all,
// to move a prompt's events to N subscribers over loopback TCP — one
// process writing the bytes to N connections and N goroutines reading
// them, as cheaply as a reader can (a large buffer, frames counted with
// bytes.Count). Its CPU a prompt is a bound under any server's fan-out
// on this machine, and its prompts a second on two cores a ceiling, for
// each number of prompts a write carries (the coalescing window decides
// that: at R prompts a second and a window of W, R×W).

// FloorRow is one size of the floor.
type FloorRow struct {
	Subscribers     int      `json:"subscribers"`
	BytesPerPrompt  int      `json:"bytes_per_prompt_and_subscriber"`
	PromptsPerWrite int      `json:"prompts_per_write"`
	Prompts         int      `json:"prompts"`
	CPU             Duration `json:"cpu_ms"`
	CPUPerPrompt    Duration `json:"cpu_per_prompt_ms"`
	CPUPerWrite     Duration `json:"cpu_per_write_and_read_ms"`
	// Ceiling is the prompts a second two cores could fan out at this
	// cost, with nothing else to do.
	Ceiling float64 `json:"ceiling_prompts_per_s_on_2_cores"`
}

// FloorRows is the fanfloor scenario's result.
type FloorRows struct {
	Rows []FloorRow `json:"rows"`
}

// Table implements Result.
func (r *FloorRows) Table() ([]string, [][]string) {
	header := []string{"subscribers", "bytes/prompt/sub", "prompts/write", "prompts", "cpu ms", "cpu/prompt ms", "cpu/write µs", "ceiling prompts/s (2 cores)"}
	var rows [][]string
	for _, f := range r.Rows {
		rows = append(rows, []string{itoa(f.Subscribers), itoa(f.BytesPerPrompt), itoa(f.PromptsPerWrite), itoa(f.Prompts),
			ms(f.CPU), ms(f.CPUPerPrompt), us(f.CPUPerWrite), rate(f.Ceiling)})
	}
	return header, rows
}

// floorBytes are a prompt's events for one subscriber: the size of the
// five frames of a prompt of the prompts workload, and of its run.stopped
// alone.
var floorBytes = []int{2800, 450}

// floorBatches are the prompts a write carries.
var floorBatches = []int{1, 4, 16, 64}

func runFloor(ctx context.Context, e *env) (Result, error) {
	res := &FloorRows{}
	for _, n := range e.cfg.Subscribers {
		for _, size := range floorBytes {
			for _, batch := range floorBatches {
				row, err := floorRun(ctx, n, size, batch)
				if err != nil {
					return res, fmt.Errorf("%d subscribers, %d bytes, %d a write: %w", n, size, batch, err)
				}
				e.logf("   %d subscribers, %d bytes a prompt, %d prompts a write: %.2f ms a prompt", n, size, batch, time.Duration(row.CPUPerPrompt).Seconds()*1e3)
				res.Rows = append(res.Rows, row)
			}
		}
	}
	return res, nil
}

// floorWrites is how many writes each subscriber gets in a row: enough
// that the row takes well over the CPU clock's resolution.
const floorWrites = 64

func floorRun(ctx context.Context, subscribers, size, batch int) (FloorRow, error) {
	row := FloorRow{Subscribers: subscribers, BytesPerPrompt: size, PromptsPerWrite: batch, Prompts: floorWrites * batch}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return row, err
	}
	defer ln.Close()
	frame := append(append([]byte("event: run.stopped\ndata: "), bytes.Repeat([]byte("x"), max(size-27, 1))...), "\n\n"...)
	payload := bytes.Repeat(frame, batch)

	accepted := make(chan net.Conn, subscribers)
	go func() {
		for range subscribers {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	var readers sync.WaitGroup
	var mu sync.Mutex
	var readErr error
	var clients []net.Conn
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	var d net.Dialer
	for range subscribers {
		c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
		if err != nil {
			return row, err
		}
		clients = append(clients, c)
		readers.Go(func() {
			if err := countFrames(c, row.Prompts); err != nil {
				mu.Lock()
				readErr = errors.Join(readErr, err)
				mu.Unlock()
			}
		})
	}
	var conns []net.Conn
	for range subscribers {
		c, ok := <-accepted
		if !ok {
			return row, errors.New("accept failed")
		}
		conns = append(conns, c)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()

	before, err := ReadUsage(os.Getpid())
	if err != nil {
		return row, err
	}
	for range floorWrites {
		for _, c := range conns {
			if _, err := c.Write(payload); err != nil {
				return row, err
			}
		}
	}
	readers.Wait()
	after, err := ReadUsage(os.Getpid())
	if err != nil {
		return row, err
	}
	if readErr != nil {
		return row, readErr
	}
	row.CPU = Duration(after.CPU - before.CPU)
	row.CPUPerPrompt = row.CPU / Duration(row.Prompts)
	row.CPUPerWrite = row.CPU / Duration(floorWrites*subscribers)
	if row.CPUPerPrompt > 0 {
		row.Ceiling = 2 * float64(time.Second) / float64(row.CPUPerPrompt)
	}
	return row, nil
}

// countFrames reads until want frames ended, as a subscriber that only
// counts them would.
func countFrames(r io.Reader, want int) error {
	br := bufio.NewReaderSize(r, 64<<10)
	buf := make([]byte, 64<<10)
	for n := 0; n < want; {
		k, err := br.Read(buf)
		if err != nil {
			return fmt.Errorf("after %d of %d frames: %w", n, want, err)
		}
		n += bytes.Count(buf[:k], []byte("\n\n"))
	}
	return nil
}
