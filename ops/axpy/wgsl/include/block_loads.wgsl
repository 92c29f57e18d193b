// The block's PER = 4 vec4s of x and of y at i, i + WG, i + 2 WG, i + 3 WG, all loaded before the
// first store.
        let x0 = x[i];
        let x1 = x[i + WG];
        let x2 = x[i + 2u * WG];
        let x3 = x[i + 3u * WG];
        let y0 = y[i];
        let y1 = y[i + WG];
        let y2 = y[i + 2u * WG];
        let y3 = y[i + 3u * WG];
