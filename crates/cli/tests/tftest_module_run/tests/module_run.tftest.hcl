# A setup module used again after the main configuration: its state
# was used last, so it is destroyed first (bucket, then app).
variables {
  prefix = "t"
}

run "setup" {
  module {
    source = "./setup"
  }

  assert {
    condition     = output.bucket == "t-bucket"
    error_message = "the setup module's bucket"
  }
}

run "app" {
  variables {
    bucket = run.setup.bucket
  }

  assert {
    condition     = output.app == "t-app-t-bucket"
    error_message = "the app uses the setup module's bucket"
  }
}

run "setup_plan" {
  command = plan

  module {
    source = "./setup"
  }

  assert {
    condition     = terraform_data.bucket.input == "t-bucket"
    error_message = "the setup module's state is kept between its runs"
  }
}

run "setup_fails" {
  module {
    source = "./setup"
  }

  assert {
    condition     = output.bucket == "other"
    error_message = "a failing assertion in a module run"
  }
}
