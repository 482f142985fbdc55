provider "aws" {
  alias = "1x"
}
