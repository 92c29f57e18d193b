// The quads of the row's chunk at `base` this invocation takes, t apart (softmax's streamed paths,
// rmsnorm's and layernorm's chunk functions): j0..j7, relative to the row's first quad.
    let j0 = base + lane;
    let j1 = base + lane + t;
    let j2 = base + lane + 2u * t;
    let j3 = base + lane + 3u * t;
    let j4 = base + lane + 4u * t;
    let j5 = base + lane + 5u * t;
    let j6 = base + lane + 6u * t;
    let j7 = base + lane + 7u * t;
