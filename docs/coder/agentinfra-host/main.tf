# agentinfra-host: a Terraform module for a Coder template of supervised
# agents (docs/coder.md). It adds the parameters `agentinfra agent create
# --backend coder --approval-mode ask` fills in, starts `agentinfra agent
# host` in the workspace with them, and exposes it as the workspace app the
# person's agentinfra reaches through Coder's app proxy.
#
#   module "agentinfra_host" {
#     source      = "./agentinfra-host"   # a copy of this folder
#     agent_id    = coder_agent.main.id
#     project_dir = "/home/coder/project" # a git repository with .agent/ (agentinfra init)
#     spec        = data.coder_parameter.ai_prompt.value
#   }
#
# The image needs agentinfra, git and the agent CLIs (claude, codex,
# gemini) with their own credentials; agentinfra needs no Coder token
# inside the workspace.

terraform {
  required_providers {
    coder = {
      source  = "coder/coder"
      version = ">= 2.0"
    }
  }
}

variable "agent_id" {
  type        = string
  description = "The coder_agent the host runs in."
}

variable "project_dir" {
  type        = string
  description = "The repository the agent works in (it has .agent/, from agentinfra init)."
}

variable "spec" {
  type        = string
  description = "The agent's spec: the template's prompt parameter (coder.prompt_parameter, default \"AI Prompt\")."
}

variable "port" {
  type        = number
  default     = 7790
  description = "The loopback port the host listens on."
}

variable "subdomain" {
  type        = bool
  default     = false
  description = "Serve the app on the deployment's wildcard domain (CODER_WILDCARD_ACCESS_URL) rather than a path: agentinfra reaches either."
}

variable "slug" {
  type        = string
  default     = "agentinfra"
  description = "The app's slug: coder.host_app_slug in the person's .agent/config.yaml when not agentinfra."
}

# Made by `agentinfra agent create --approval-mode ask` (a new 256-bit
# token per agent). The host answers only requests that carry it.
data "coder_parameter" "host_token" {
  name         = "agentinfra_host_token"
  display_name = "agentinfra host token"
  description  = "Set by agentinfra agent create; leave it alone."
  type         = "string"
  default      = ""
  mutable      = true
}

# The person who created the agent: its sessions are theirs (they, and
# the workspace's operators, decide its requests).
data "coder_parameter" "owner" {
  name         = "agentinfra_owner"
  display_name = "agentinfra owner"
  type         = "string"
  default      = ""
  mutable      = true
}

data "coder_parameter" "cli" {
  name         = "agentinfra_cli"
  display_name = "Agent CLI"
  type         = "string"
  default      = "claude"
  mutable      = true
  option {
    name  = "Claude Code"
    value = "claude"
  }
  option {
    name  = "Codex"
    value = "codex"
  }
  option {
    name  = "Gemini CLI"
    value = "gemini"
  }
}

# The token goes into a file only its user reads, never into a URL or the
# command line; the spec and owner are passed base64-encoded so that no
# quote in them reaches the shell.
resource "coder_script" "agentinfra_host" {
  agent_id     = var.agent_id
  display_name = "agentinfra host"
  run_on_start = true
  script       = <<-EOT
    #!/bin/sh
    set -eu
    umask 077
    mkdir -p "$HOME/.config/agentinfra"
    printf '%s\n' '${data.coder_parameter.host_token.value}' > "$HOME/.config/agentinfra/host-token"
    spec=$(printf '%s' '${base64encode(var.spec)}' | base64 -d)
    owner=$(printf '%s' '${base64encode(data.coder_parameter.owner.value)}' | base64 -d)
    cd '${var.project_dir}'
    nohup agentinfra agent host --http 127.0.0.1:${var.port} \
      --token-file "$HOME/.config/agentinfra/host-token" \
      --spec "$spec" --owner "$owner" --cli '${data.coder_parameter.cli.value}' \
      >/tmp/agentinfra-host.log 2>&1 &
  EOT
}

# An app shared with its owner only (a path app unless var.subdomain):
# Coder's proxy lets through the owner's session token; the host then
# wants its own token too.
resource "coder_app" "agentinfra" {
  agent_id     = var.agent_id
  slug         = var.slug
  display_name = "agentinfra"
  url          = "http://localhost:${var.port}/"
  share        = "owner"
  subdomain    = var.subdomain
  hidden       = true
}
