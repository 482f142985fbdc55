# The state used last is destroyed first: here the working directory's
# (app), then the setup module's (bucket).
variables {
  prefix = "u"
}

run "setup" {
  module {
    source = "./setup"
  }
}

run "app" {
  variables {
    bucket = run.setup.bucket
  }

  assert {
    condition     = output.app == "u-app-u-bucket"
    error_message = "the app uses the setup module's bucket"
  }
}
