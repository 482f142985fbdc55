terraform {
  required_providers {
    AWS      = { source = "hashicorp/aws" }
    my_thing = { source = "hashicorp/thing" }
  }
}
