provider "aws" {
  region     = "eu-west-1"
  count      = 1
  depends_on = []
  for_each   = {}
  source     = "hashicorp/aws"
  version    = "~> 5.0"
}
