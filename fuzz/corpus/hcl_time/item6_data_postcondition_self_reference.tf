data "terraform_remote_state" "a" {
  backend = "local"
  lifecycle {
    postcondition {
      condition     = data.terraform_remote_state.a.outputs != null
      error_message = "No outputs."
    }
  }
}
