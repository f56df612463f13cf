fn main() {
    println!("watermark {}", watermark_engine::VERSION);
}
