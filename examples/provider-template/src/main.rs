fn main() {
    terrane_sdk::serve("example", terraform_provider_notes::Notes)
}
