test {
  parallel = true
}

variables {
  name = "a"
}

mock_provider "aws" {
  alias = "mocked"
}

provider "aws" {
  region = "us-east-1"
}

override_resource {
  target = terraform_data.d
  values = {
    output = "x"
  }
}

override_data {
  target = data.terraform_remote_state.s
  values = {}
}

override_module {
  target  = module.m
  outputs = {}
}

run "first" {
  command = plan

  variables {
    name = "b"
  }

  plan_options {
    refresh = false
  }

  assert {
    condition     = output.name == "b"
    error_message = "wrong name"
  }

  expect_failures = [var.name]
}

run "second" {
  state_key = "other"
  parallel  = true

  override_module {
    target  = module.m
    outputs = {}
  }
}
