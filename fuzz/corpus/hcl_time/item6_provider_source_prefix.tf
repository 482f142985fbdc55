terraform {
  required_providers {
    aws = {
      source = "hashicorp/terraform-provider-aws"
    }
  }
}
