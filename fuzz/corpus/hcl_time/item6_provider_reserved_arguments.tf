provider "aws" {
  region     = "eu-west-1"
  count      = 1
  depends_on = []
  # for_each: served as OpenTofu serves it (cli/tests/provider_for_each.rs)
  source     = "hashicorp/aws"
  version    = "~> 5.0"
}
