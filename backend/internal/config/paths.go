package config

import "net/url"

// Paths are the files and directories a configuration uses, for
// "agents paths". Missing ones are "".
type Paths struct {
	ConfigFile  string   `json:"configFile"`
	ConfigDir   string   `json:"configDir"`
	DataDir     string   `json:"dataDir"`
	DB          string   `json:"db"` // a path, or a DSN with its password redacted
	APIKeysFile string   `json:"apiKeysFile"`
	ParamsFile  string   `json:"paramsFile"`
	AgentFiles  []string `json:"agentFiles"`
	AgentDirs   []string `json:"agentDirs"`
	AgentsFrom  string   `json:"agentsFrom"`
}

// Paths returns the paths of r, safe to print.
func (r *Resolved) Paths() Paths {
	return Paths{
		ConfigFile:  r.ConfigFile,
		ConfigDir:   r.ConfigDir,
		DataDir:     r.DataDir,
		DB:          redactDSN(r.DB),
		APIKeysFile: r.APIKeysFile,
		ParamsFile:  r.ParamsFile,
		AgentFiles:  nonNil(r.AgentFiles),
		AgentDirs:   nonNil(r.AgentDirs),
		AgentsFrom:  r.AgentsFrom,
	}
}

// redactDSN hides the password of a postgres:// DSN.
func redactDSN(db string) string {
	if !isDSN(db) {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return "postgres://" + redacted
	}
	if u.Query().Has("password") {
		q := u.Query()
		q.Set("password", redacted)
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
